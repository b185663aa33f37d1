// The instant's one spelling (svc emit --instant and POST /api/messages take the same; emit.api.test.ts checks both
// doors).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseInstant } from './instant.ts';

test('instants are ISO-8601 with an explicit zone; impossible times are refused', () => {
  const ok: [string, number][] = [
    ['2026-01-15T11:00:00Z', Date.UTC(2026, 0, 15, 11)],
    ['2026-01-15T11:00Z', Date.UTC(2026, 0, 15, 11)],
    ['2026-01-15t11:00:00z', Date.UTC(2026, 0, 15, 11)],
    ['2026-01-15T11:00:00.25Z', Date.UTC(2026, 0, 15, 11, 0, 0, 250)],
    ['2026-01-15T11:00:00.123456789Z', Date.UTC(2026, 0, 15, 11, 0, 0, 123)],
    ['2026-01-15T13:00:00+02:00', Date.UTC(2026, 0, 15, 11)],
    ['2026-01-15T11:00:00-00:00', Date.UTC(2026, 0, 15, 11)],
    ['2026-01-16T10:59:00+23:59', Date.UTC(2026, 0, 15, 11)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
  ];
  for (const [text, ms] of ok) assert.equal(parseInstant(text), ms, text);
  const refused = [
    '2026-02-30T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-15T24:00:00Z',
    '2026-01-15T11:60:00Z',
    '2026-01-15T11:00:60Z',
    '2026-01-15T11:00:00+24:00',
    '2026-01-15T11:00:00+01:60',
    '2026-01-15T11:00:00+0100',
    '2026-01-15T11:00:00',
    '2026-01-15 11:00:00Z',
    ' 2026-01-15T11:00:00Z',
    '2026-01-15T11:00:00Z\n',
    '2026-01-15T11:00:00.Z',
    '2026-01-15T11:00:00.1234567890Z',
    '2026-01-15',
    'yesterday',
    '1768474800000',
    '',
  ];
  for (const text of refused) assert.equal(parseInstant(text), undefined, JSON.stringify(text));
});

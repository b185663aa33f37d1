import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linkBase } from './link-base.ts';

test('printed links start at SVC_EXTERNAL_URL, else at the address listened on (localhost for every address)', () => {
  const at = (host: string, externalUrl?: string) => linkBase({ host, port: 8080, externalUrl });
  assert.equal(at('0.0.0.0'), 'http://localhost:8080');
  assert.equal(at('::'), 'http://localhost:8080');
  assert.equal(at('127.0.0.1'), 'http://127.0.0.1:8080', 'localhost may resolve to ::1, where nothing listens');
  assert.equal(at('::1'), 'http://[::1]:8080');
  assert.equal(at('svc.internal'), 'http://svc.internal:8080');
  assert.equal(at('127.0.0.1', 'https://svc.example.com'), 'https://svc.example.com');
  assert.equal(
    linkBase({ host: '0.0.0.0', port: 0, externalUrl: undefined }, 41234),
    'http://localhost:41234',
    'the port actually bound',
  );
});

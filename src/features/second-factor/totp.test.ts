import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { systemRandom } from '../../deps.ts';
import { matchTotpStep, newTotpSecret, totpCode, totpStep, totpUri } from './totp.ts';

// RFC 6238 appendix B, SHA1 rows: seed "12345678901234567890" (ASCII), 8 digits, 30-second steps.
const RFC_SEED = Secret.fromLatin1('12345678901234567890');
const RFC_VECTORS: [seconds: number, code: string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

test('otpauth reproduces the RFC 6238 SHA1 test vectors', () => {
  for (const [seconds, code] of RFC_VECTORS) {
    assert.equal(
      TOTP.generate({ secret: RFC_SEED, algorithm: 'SHA1', digits: 8, period: 30, timestamp: seconds * 1000 }),
      code,
      `T=${seconds}`,
    );
  }
});

test('our 6-digit codes are the RFC vectors truncated to six digits, and match at their own step', () => {
  const seed = RFC_SEED.base32;
  for (const [seconds, code] of RFC_VECTORS) {
    const now = seconds * 1000;
    assert.equal(totpCode(seed, now), code.slice(-6), `T=${seconds}`);
    assert.equal(matchTotpStep(seed, code.slice(-6), now), Math.floor(seconds / 30));
  }
});

test('one step of drift either side is accepted and reported as its own step; two steps are not', () => {
  const secret = newTotpSecret(systemRandom);
  const now = Date.UTC(2026, 0, 15, 12, 0, 10);
  const step = totpStep(now);
  assert.equal(matchTotpStep(secret, totpCode(secret, now - 30_000), now), step - 1);
  assert.equal(matchTotpStep(secret, totpCode(secret, now), now), step);
  assert.equal(matchTotpStep(secret, totpCode(secret, now + 30_000), now), step + 1);
  assert.equal(matchTotpStep(secret, totpCode(secret, now - 60_000), now), null);
  assert.equal(matchTotpStep(secret, totpCode(secret, now + 60_000), now), null);
});

test('malformed input never matches', () => {
  const secret = newTotpSecret(systemRandom);
  const now = Date.UTC(2026, 0, 15, 12, 0, 10);
  const code = totpCode(secret, now);
  for (const bad of ['', code.slice(1), `${code}0`, `${code.slice(0, 5)}x`, ` ${code}`, '１２３４５６']) {
    assert.equal(matchTotpStep(secret, bad, now), null, JSON.stringify(bad));
  }
});

test('secrets carry 160 random bits and the URI names the fixed parameters', () => {
  const a = newTotpSecret(systemRandom);
  assert.equal(Secret.fromBase32(a).bytes.length, 20);
  assert.notEqual(a, newTotpSecret(systemRandom));
  const uri = new URL(totpUri(a, 'alice'));
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.searchParams.get('secret'), a);
  assert.equal(uri.searchParams.get('algorithm'), 'SHA1');
  assert.equal(uri.searchParams.get('digits'), '6');
  assert.equal(uri.searchParams.get('period'), '30');
  assert.equal(uri.searchParams.get('issuer'), 'svc');
});

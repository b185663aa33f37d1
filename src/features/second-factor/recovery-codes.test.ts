import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemRandom } from '../../deps.ts';
import { hashRecoveryCode, newRecoveryCode, normaliseRecoveryCode, recoveryCodeMatches } from './recovery-codes.ts';

test('codes are three groups of five Crockford base32 characters (75 bits), all different', () => {
  const codes = Array.from({ length: 200 }, () => newRecoveryCode(systemRandom));
  for (const code of codes) assert.match(code, /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
  assert.equal(new Set(codes).size, codes.length);
});

test('typing is forgiving: case, spaces and hyphens are ignored; i/l read as 1 and o as 0', () => {
  assert.equal(normaliseRecoveryCode('ab1cd-ef0gh-jk2mn'), 'ab1cdef0ghjk2mn');
  assert.equal(normaliseRecoveryCode(' ABICD EFOGH JK2MN '), 'ab1cdef0ghjk2mn');
  assert.equal(normaliseRecoveryCode('aBlcdef0ghjk2mn'), 'ab1cdef0ghjk2mn');
  for (const bad of ['', 'ab1cd-ef0gh', 'ab1cd-ef0gh-jk2mn-x', 'ab1cd-ef0gh-jk2mu', 'ab1cd_ef0gh_jk2mn']) {
    assert.equal(normaliseRecoveryCode(bad), undefined, bad);
  }
});

test('stored hashes are salted, never contain the code, and match only their code', () => {
  const code = normaliseRecoveryCode(newRecoveryCode(systemRandom))!;
  const a = hashRecoveryCode(systemRandom, code);
  const b = hashRecoveryCode(systemRandom, code);
  assert.notEqual(a, b);
  assert.ok(!a.includes(code));
  assert.ok(recoveryCodeMatches(a, code) && recoveryCodeMatches(b, code));
  const other = normaliseRecoveryCode(newRecoveryCode(systemRandom))!;
  assert.equal(recoveryCodeMatches(a, other), false);
  assert.equal(recoveryCodeMatches('garbage', code), false);
  assert.equal(recoveryCodeMatches(a.replace('hmac-sha256', 'plain'), code), false);
});

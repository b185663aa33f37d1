// Second-factor codes are throttled far more strictly than passwords: a pending session is ended after 3 wrong
// codes, and an account's code step locks after 10, for longer at every consecutive lock until a code succeeds.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';
import { atTotpStep, enrolTotp } from '../../../test/helpers/second-factor.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { sha256 } from '../../deps.ts';
import { verifySecondFactor } from './second-factor.service.ts';
import { createSession } from '../auth/sessions.service.ts';
import { totpCode } from './totp.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A 6-digit code that is not valid for `secret` anywhere in the window around `now`. */
function wrongCode(secret: string, now: number): string {
  const valid = new Set([-30_000, 0, 30_000].map((d) => totpCode(secret, now + d)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!valid.has(code)) return code;
  }
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  /** A fresh session owing the account's code (as after its password), named by its id hash. */
  const pendingSession = async (accountId: string) =>
    sha256(await createSession(t.deps, accountId, 'totp', 'attacker'));

  /** One wrong code from a session, from any of 200 addresses (a distributed attacker); the result of the check. */
  let guesses = 0;
  const guess = (account: { id: string }, sessionIdHash: string, secret: string) =>
    verifySecondFactor(t.deps, {
      accountId: account.id,
      sessionIdHash,
      code: wrongCode(secret, t.clock.now()),
      address: `203.0.113.${guesses++ % 200}`,
    });

  /**
   * An attacker who knows the password guessing codes for `ms`: a new session whenever one is ended, waiting out every
   * lock. Returns how many guesses were actually checked.
   */
  async function guessFor(account: { id: string }, secret: string, ms: number): Promise<number> {
    const end = t.clock.now() + ms;
    let session = await pendingSession(account.id);
    let checked = 0;
    while (t.clock.now() < end) {
      const r = await guess(account, session, secret);
      assert.equal(r.ok, false);
      if (r.ok) break;
      if (r.reason === 'locked') {
        t.clock.advance(r.retryAfterMs);
        continue;
      }
      assert.ok(r.reason === 'invalid' || r.reason === 'session-ended', r.reason);
      checked++;
      if (r.reason === 'session-ended') session = await pendingSession(account.id);
    }
    return checked;
  }

  /** Ten wrong codes from fresh sessions; returns how long the resulting lock lasts. */
  async function lockOut(account: { id: string }, secret: string): Promise<number> {
    let session = await pendingSession(account.id);
    for (let i = 0; i < 10; i++) {
      const r = await guess(account, session, secret);
      assert.ok(!r.ok && (r.reason === 'invalid' || r.reason === 'session-ended'), `guess ${i + 1} was checked`);
      if (r.reason === 'session-ended') session = await pendingSession(account.id);
    }
    const r = await verifySecondFactor(t.deps, {
      accountId: account.id,
      sessionIdHash: session,
      code: totpCode(secret, t.clock.now()),
      address: '203.0.113.9',
    });
    assert.ok(!r.ok && r.reason === 'locked', 'even the right code is refused while locked');
    return r.retryAfterMs;
  }

  test('three wrong codes (TOTP or recovery) end the pending session: the password is owed again', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    const c = await atTotpStep(t, account);
    assert.equal((await c.post('/login/totp', { code: wrongCode(secret, t.clock.now()) })).status, 401);
    assert.equal((await c.post('/login/totp', { code: 'zzzzz-zzzzz-zzzzz' })).status, 401);
    const third = await c.post('/login/totp', { code: wrongCode(secret, t.clock.now()) });
    assert.equal(third.location, '/login?notice=code-attempts');
    assert.equal(c.cookies.has('svc_session'), false, 'the session cookie is cleared (the device cookie stays)');
    const sessions = await t.deps.db
      .selectFrom('sessions')
      .select('id_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.deepEqual(sessions, [], 'the pending session is gone');
    assert.match((await c.get(third.location!)).text, /Too many wrong codes\. Sign in again with your password\./);

    const again = await atTotpStep(t, account);
    assert.equal((await again.post('/login/totp', { code: totpCode(secret, t.clock.now()) })).location, '/');
  });

  test('ten wrong codes across sessions lock the account\u2019s code step, recovery codes included; the lock lifts by itself', async () => {
    const account = await buildAccount(t);
    const { secret, recoveryCodes } = await enrolTotp(t, account);
    let attacker = await atTotpStep(t, account);
    for (let i = 1; i <= 10; i++) {
      const res = await attacker.post('/login/totp', { code: wrongCode(secret, t.clock.now()) });
      if (i % 3 === 0) {
        assert.equal(res.location, '/login?notice=code-attempts', `attempt ${i} ends the session`);
        attacker = await atTotpStep(t, account);
      } else {
        assert.equal(res.status, 401, `attempt ${i}`);
      }
    }
    const fresh = await atTotpStep(t, account);
    const locked = await fresh.post('/login/totp', { code: recoveryCodes[0]! });
    assert.equal(locked.status, 429);
    assert.match(locked.text, /Too many failed attempts\. Try again in 15 minutes\./);
    assert.equal((await fresh.post('/login/totp', { code: totpCode(secret, t.clock.now()) })).status, 429);
    t.clock.advance(15 * MINUTE);
    const later = await atTotpStep(t, account);
    assert.equal((await later.post('/login/totp', { code: totpCode(secret, t.clock.now()) })).location, '/');
  });

  test('consecutive locks double, even after housekeeping, and only a valid code resets them', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    assert.equal(await lockOut(account, secret), 15 * MINUTE);
    t.clock.advance(15 * MINUTE);
    await housekeepOnce(t.deps);
    assert.equal(await lockOut(account, secret), 30 * MINUTE, 'the expired lock is remembered');
    t.clock.advance(30 * MINUTE);
    assert.equal(await lockOut(account, secret), 60 * MINUTE);
    t.clock.advance(60 * MINUTE);

    const ok = await verifySecondFactor(t.deps, {
      accountId: account.id,
      sessionIdHash: await pendingSession(account.id),
      code: totpCode(secret, t.clock.now()),
      address: '203.0.113.9',
    });
    assert.deepEqual(ok, { ok: true, via: 'totp' });
    t.clock.advance(30_000);
    assert.equal(await lockOut(account, secret), 15 * MINUTE, 'a success starts over');

    // Locks are capped at a day, and a week without any is forgotten.
    t.clock.advance(15 * MINUTE);
    for (const minutes of [30, 60, 120, 240, 480, 960, 1440, 1440]) {
      assert.equal(await lockOut(account, secret), minutes * MINUTE);
      t.clock.advance(minutes * MINUTE);
    }
    t.clock.advance(7 * 24 * HOUR);
    await housekeepOnce(t.deps);
    assert.equal(await lockOut(account, secret), 15 * MINUTE);
  });

  test('an attacker holding the password gets 30 code guesses in the first hour and 70 in the first day', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    assert.equal(await guessFor(account, secret, HOUR), 30);
    await getDb().db.deleteFrom('auth_throttle').execute();
    assert.equal(await guessFor(account, secret, 24 * HOUR), 70);
  });
});

// Re-confirming the password from a signed-in session (profile acts, enrolment at sign-in): a lock on the username,
// which anyone can fill, does not reach it; each session is limited on its own instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../../test/helpers/app.ts';
import { lockUsername, returningClient } from '../../../test/helpers/device.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { totpCode } from './totp.ts';

/** The secret shown on an enrolment page. */
function secretOn(page: string): string {
  const m = /id="totp-secret">([A-Z2-7]+)</.exec(page);
  assert.ok(m, 'the page shows the secret');
  return m[1]!;
}

forEachDialect((getDb) => {
  test('under a username lock, the owner signed in by its device cookie still changes password, enrols, renews codes', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const owner = await returningClient(t, a, '203.0.113.77');
    await lockUsername(t, a.username);
    assert.equal((await owner.post('/login', { username: a.username, password: a.password })).status, 303);
    await owner.get('/profile');

    const started = await owner.post('/profile/totp/start', { password: a.password });
    assert.equal(started.status, 200);
    const confirmed = await owner.post('/profile/totp/confirm', { code: totpCode(secretOn(started.text), t.clock.now()) });
    assert.equal(confirmed.status, 200);
    assert.equal((await owner.post('/profile/recovery-codes', { password: a.password })).status, 200);
    assert.equal((await owner.post('/profile/password', { current: 'not the password', password: 'whatever 12345' })).status, 401);
    const changed = await owner.post('/profile/password', { current: a.password, password: 'a brand new password 123' });
    assert.equal(changed.location, '/profile?notice=password-changed');
  });

  test('under a username lock, enrolment offered at sign-in still starts for the owner', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t, { enrolPrompt: true });
    const first = await signIn(t, a);
    assert.equal((await first.post('/login/enrol', { action: 'skip' })).location, '/');
    await first.post('/logout');
    first.address = '203.0.113.78';
    // An administrator's "Reset second factor" offers enrolment again at the next sign-in.
    await t.deps.db.updateTable('accounts').set({ totp_enrol_prompt: 1 }).where('id', '=', a.id).execute();
    await lockUsername(t, a.username);

    assert.equal((await first.post('/login', { username: a.username, password: a.password })).location, '/login/enrol');
    await first.get('/login/enrol');
    const started = await first.post('/login/enrol', { action: 'start', password: a.password });
    assert.equal(started.status, 200);
    assert.match(started.text, /id="totp-secret"/);
  });

  test('a session guesses no faster than one address: 5 wrong passwords lock its confirmations, not another session', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const thief = await signIn(t, a);
    thief.address = '198.51.100.7';
    for (let i = 0; i < 5; i++) assert.equal((await thief.post('/profile/totp/start', { password: `guess-${i}-guess` })).status, 401);
    // A new address does not help: the lock is on the session.
    thief.address = '198.51.100.8';
    assert.equal((await thief.post('/profile/totp/start', { password: a.password })).status, 429);
    assert.equal((await thief.post('/profile/password', { current: a.password, password: 'a brand new password 123' })).status, 429);

    const other = await signIn(t, a);
    other.address = '198.51.100.9';
    assert.equal((await other.post('/profile/totp/start', { password: a.password })).status, 200, 'another session is not locked');
  });
});

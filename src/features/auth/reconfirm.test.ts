// Re-confirming the password from a signed-in session (profile acts, enrolment at sign-in): a lock on the username,
// which anyone can fill, does not reach it; each session is limited on its own instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../../test/helpers/app.ts';
import { lockUsername, returningClient } from '../../../test/helpers/device.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import {
  finishEnrolment,
  startEnrolmentAtSignIn,
  startEnrolmentInProfile,
} from '../../../test/helpers/second-factor.ts';

forEachDialect((getDb) => {
  test('under a username lock, the owner signed in by its device cookie still changes password, enrols, renews codes', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const owner = await returningClient(t, a, '203.0.113.77');
    await lockUsername(t, a.username);
    assert.equal((await owner.post('/login', { username: a.username, password: a.password })).status, 303);
    await owner.get('/profile');

    const secret = await startEnrolmentInProfile(owner, a.password);
    assert.equal((await finishEnrolment(t, owner, '/profile/totp/confirm', secret)).length, 10);
    t.clock.advance(30_000);
    await owner.get('/profile');
    assert.equal((await owner.post('/profile/reauth', { secret: a.password })).status, 303);
    await owner.get('/profile');
    assert.equal((await owner.post('/profile/recovery-codes')).location, '/profile/recovery-codes?from=profile');
    assert.equal(
      (await owner.post('/profile/password', { current: 'not the password', password: 'whatever 12345' })).status,
      401,
    );
    const changed = await owner.post('/profile/password', {
      current: a.password,
      password: 'a brand new password 123',
    });
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
    assert.ok(await startEnrolmentAtSignIn(first));
  });

  test('a session guesses no faster than one address: 5 wrong passwords lock its confirmations, not another session', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const thief = await signIn(t, a);
    thief.address = '198.51.100.7';
    const confirm = (c: typeof thief, secret: string) => c.post('/profile/reauth', { secret });
    for (let i = 0; i < 5; i++) assert.equal((await confirm(thief, `guess-${i}-guess`)).status, 401);
    // A new address does not help: the lock is on the session.
    thief.address = '198.51.100.8';
    assert.equal((await confirm(thief, a.password)).status, 429);
    assert.equal(
      (await thief.post('/profile/password', { current: a.password, password: 'a brand new password 123' })).status,
      429,
    );

    const other = await signIn(t, a);
    other.address = '198.51.100.9';
    assert.equal((await confirm(other, a.password)).status, 303, 'another session is not locked');
  });
});

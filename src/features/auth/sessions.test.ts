// Session lifecycle rules beyond sign-in: a password change voids every session created under the old password
// (even one racing the change), and a half-signed-in session gets a new id when it becomes fully signed in.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import {
  atTotpStep,
  codeNow,
  codesOn,
  enrolTotp,
  startEnrolmentAtSignIn,
} from '../../../test/helpers/second-factor.ts';
import { sha256 } from '../../deps.ts';
import { createSession } from './sessions.service.ts';
import { signInWithPassword } from './signin.service.ts';

const COOKIE = 'svc_session';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  const sessionRows = (accountId: string) =>
    t.deps.db.selectFrom('sessions').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();

  /** A client presenting a given cookie value. */
  function withCookie(value: string): TestClient {
    const c = t.client();
    c.cookies.set(COOKIE, value);
    return c;
  }

  test('a sign-in that checked the old password while it was being changed does not outlive the change', async () => {
    const account = await buildAccount(t);
    const changer = await signIn(t, account);
    // The racing sign-in has verified the old password ...
    const verified = await signInWithPassword(
      t.deps,
      { username: account.username, password: account.password, address: '198.51.100.4' },
      async () => false,
    );
    assert.ok(verified.ok);
    // ... the change commits and ends the other sessions ...
    const changed = await changer.post('/profile/password', {
      current: account.password,
      password: 'a brand new password',
    });
    assert.equal(changed.location, '/profile?notice=password-changed');
    // ... and only then is the racing session created.
    const racer = withCookie(
      await createSession(t.deps, account.id, 'full', 'racer', verified.account.credentials_version),
    );
    assert.equal((await racer.get('/')).location, '/login', 'the session made under the old password is refused');
    assert.deepEqual(
      (await sessionRows(account.id)).map((r) => r.user_agent),
      ['svc-test'],
      'and deleted',
    );
    assert.equal((await changer.get('/')).status, 200, 'the session that changed the password stays');

    // Sessions made under the new password work, by password or by a first factor that reads the current version.
    await signIn(t, { username: account.username, password: 'a brand new password' });
    assert.equal((await withCookie(await createSession(t.deps, account.id, 'full', 'sso')).get('/')).status, 200);
    // And the changer stays signed in through a second change too.
    assert.equal(
      (await changer.post('/profile/password', { current: 'a brand new password', password: 'yet another password' }))
        .status,
      303,
    );
    assert.equal((await changer.get('/')).status, 200);
    assert.equal((await sessionRows(account.id)).length, 1);
  });

  test('two password changes at once: one wins, the other is refused and its session ends', async () => {
    const account = await buildAccount(t);
    const clients = [await signIn(t, account), await signIn(t, account)];
    const next = ['first new password', 'second new password'];
    const results = await Promise.all(
      clients.map((c, i) => c.post('/profile/password', { current: account.password, password: next[i]! })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [303, 401]);
    const winner = results.findIndex((r) => r.status === 303);
    assert.equal((await clients[winner]!.get('/')).status, 200);
    assert.equal((await clients[1 - winner]!.get('/')).location, '/login');
    await signIn(t, { username: account.username, password: next[winner]! });
    const loser = t.client();
    await loser.get('/login');
    assert.equal((await loser.post('/login', { username: account.username, password: next[1 - winner]! })).status, 401);
  });

  test('passing the two-factor step issues a new session id; the pending one is void', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    const c = await atTotpStep(t, account);
    const pendingCookie = c.cookies.get(COOKIE)!;
    const [pending] = await sessionRows(account.id);
    assert.equal(pending!.id_hash, sha256(pendingCookie));

    const res = await c.post('/login/totp', { code: codeNow(t, secret) });
    assert.equal(res.location, '/');
    const fullCookie = c.cookies.get(COOKIE)!;
    assert.notEqual(fullCookie, pendingCookie);
    assert.match(res.headers.getSetCookie().join('\n'), /HttpOnly/);
    const rows = await sessionRows(account.id);
    assert.equal(rows.length, 1, 'the pending row is gone');
    const full = rows[0]!;
    assert.equal(full.id_hash, sha256(fullCookie));
    assert.equal(full.stage, 'full');
    assert.notEqual(full.public_id, pending!.public_id);
    assert.notEqual(full.csrf_token, pending!.csrf_token);
    assert.equal(full.created_at, pending!.created_at, 'still the same sign-in');

    assert.equal((await c.get('/')).status, 200);
    assert.equal(
      (await withCookie(pendingCookie).get('/')).location,
      '/login',
      'a copy of the pending cookie is worthless',
    );
    assert.equal((await c.post('/profile/sessions/end', { session: 'none' })).status, 303, 'the new form token works');
  });

  test('finishing or skipping enrolment at sign-in issues a new session id too', async () => {
    const account = await buildAccount(t, { enrolPrompt: true });
    const signInToEnrol = async () => {
      const c = t.client();
      await c.get('/login');
      assert.equal(
        (await c.post('/login', { username: account.username, password: account.password })).location,
        '/login/enrol',
      );
      await c.get('/login/enrol');
      return c;
    };

    const enrolling = await signInToEnrol();
    const pendingCookie = enrolling.cookies.get(COOKIE)!;
    const secret = await startEnrolmentAtSignIn(enrolling);
    const done = await enrolling.post('/login/enrol', { action: 'confirm', code: codeNow(t, secret) });
    assert.equal(done.status, 303);
    assert.notEqual(enrolling.cookies.get(COOKIE), pendingCookie);
    assert.equal((await withCookie(pendingCookie).get('/')).location, '/login');
    const codes = await enrolling.get(done.location!);
    assert.match(codes.text, /Sign out/, 'the recovery codes page is already a signed-in page');
    assert.equal(codesOn(codes.text).length, 10, 'the codes were held for the new session');
    assert.equal((await enrolling.get('/')).status, 200);

    const other = await buildAccount(t, { enrolPrompt: true });
    const skipper = t.client();
    await skipper.get('/login');
    await skipper.post('/login', { username: other.username, password: other.password });
    await skipper.get('/login/enrol');
    const skipCookie = skipper.cookies.get(COOKIE)!;
    assert.equal((await skipper.post('/login/enrol', { action: 'skip' })).location, '/');
    assert.notEqual(skipper.cookies.get(COOKIE), skipCookie);
    assert.equal((await withCookie(skipCookie).get('/')).location, '/login');
    assert.equal((await skipper.get('/')).status, 200);
  });
});

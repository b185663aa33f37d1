import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, signedInAs } from '../../../test/helpers/factories.ts';
import { atTotpStep } from '../../../test/helpers/second-factor.ts';
import { totpCode } from '../auth/totp.ts';
import { profileSections } from './sections.ts';

const CODE_LIST = /<li><code class="secret">([0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{5})<\/code><\/li>/g;

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  test('a viewer sees every section, and no session hash or cookie appears in the page', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const page = await client.get('/profile');
    assert.equal(page.status, 200);
    assert.deepEqual(profileSections.map((s) => s.key), ['password', 'second-factor', 'sso', 'tokens', 'sessions']);
    for (const s of profileSections) assert.ok(page.text.includes(`id="profile-${s.key}"`), s.key);
    for (const heading of ['Password', 'Two-factor authentication', 'Single sign-on', 'API tokens', 'Sessions']) assert.match(page.text, new RegExp(`<h2>${heading}</h2>`));
    const rows = await t.deps.db.selectFrom('sessions').select(['id_hash', 'public_id']).where('account_id', '=', account.id).execute();
    assert.equal(rows.length, 1);
    assert.ok(!page.text.includes(rows[0]!.id_hash));
    assert.ok(page.text.includes(rows[0]!.public_id));
    for (const cookie of client.cookies.values()) assert.ok(!page.text.includes(cookie));
    for (const notice of ['constructor', '__proto__', 'nonsense']) assert.equal((await client.get(`/profile?notice=${notice}`)).status, 200);
  });

  test('changing the password needs the current one and the 8-72 rule, and ends only the other sessions', async () => {
    const account = await buildAccount(t);
    const here = await signIn(t, account);
    const elsewhere = await signIn(t, account);

    const wrong = await here.post('/profile/password', { current: 'not the password', password: 'a new long password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /Incorrect password/);
    for (const [password, message] of [
      ['short', /at least 8 characters/],
      ['p'.repeat(73), /at most 72 characters/],
      ['😀'.repeat(73), /at most 72 characters/],
    ] as const) {
      const res = await here.post('/profile/password', { current: account.password, password });
      assert.equal(res.status, 400);
      assert.match(res.text, message);
    }
    assert.equal((await elsewhere.get('/')).status, 200, 'refused changes end nothing');

    const next = '😀'.repeat(72);
    const ok = await here.post('/profile/password', { current: account.password, password: next });
    assert.equal(ok.location, '/profile?notice=password-changed');
    assert.match((await here.get(ok.location!)).text, /Your password is changed/);
    assert.equal((await here.get('/')).status, 200, 'this session stays');
    assert.equal((await elsewhere.get('/')).location, '/login', 'the other session ended');

    const old = t.client();
    await old.get('/login');
    assert.equal((await old.post('/login', { username: account.username, password: account.password })).status, 401);
    await signIn(t, { username: account.username, password: next });
  });

  test('wrong current passwords on the profile count against the sign-in throttle', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    for (let i = 0; i < 5; i++) await c.post('/profile/password', { current: 'wrong password', password: 'a new long password' });
    const locked = await c.post('/profile/password', { current: account.password, password: 'a new long password' });
    assert.equal(locked.status, 429);
    const login = t.client();
    await login.get('/login');
    assert.equal((await login.post('/login', { username: account.username, password: account.password })).status, 429);
  });

  test('enrolment and new recovery codes need the password; a new set voids the old one', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    assert.match((await c.get('/profile')).text, /Status: <span class="badge">off<\/span>/);

    assert.equal((await c.post('/profile/totp/start', { password: 'wrong password' })).status, 401);
    const page = await c.post('/profile/totp/start', { password: account.password });
    assert.equal(page.status, 200);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.text)![1]!;
    assert.equal((await c.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now() - 90_000) })).status, 400);
    const done = await c.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now()) });
    const first = [...done.text.matchAll(CODE_LIST)].map((m) => m[1]!);
    assert.equal(first.length, 10);
    assert.match((await c.get('/profile')).text, /10 of 10/);
    // Starting again while enrolled changes nothing.
    assert.equal((await c.post('/profile/totp/start', { password: account.password })).location, '/profile');
    const row = await t.deps.db.selectFrom('accounts').select('totp_secret').where('id', '=', account.id).executeTakeFirstOrThrow();
    assert.equal(row.totp_secret, secret);

    const refused = await c.post('/profile/recovery-codes', { password: 'wrong password' });
    assert.equal(refused.status, 401);
    assert.match(refused.text, /Incorrect password/);
    const regenerated = await c.post('/profile/recovery-codes', { password: account.password });
    const second = [...regenerated.text.matchAll(CODE_LIST)].map((m) => m[1]!);
    assert.equal(second.length, 10);
    assert.ok(second.every((code) => !first.includes(code)));

    t.clock.advance(30_000);
    assert.equal((await (await atTotpStep(t, account)).post('/login/totp', { code: first[0]! })).status, 401, 'the old set is void');
    const ok = await (await atTotpStep(t, account)).post('/login/totp', { code: second[0]! });
    assert.equal(ok.location, '/profile?notice=recovery-code-used');
  });

  test('own sessions: listed with their browser, any can be ended, a foreign or stale id is a no-op', async () => {
    const account = await buildAccount(t);
    const here = t.client();
    here.userAgent = 'Browser-Here/1.0';
    await here.get('/login');
    await here.post('/login', { username: account.username, password: account.password });
    const there = t.client();
    there.userAgent = 'Browser-There/2.0 <b>';
    await there.get('/login');
    await there.post('/login', { username: account.username, password: account.password });
    const stranger = await signedInAs(t, 'viewer');

    const page = await here.get('/profile');
    assert.match(page.text, /Browser-Here\/1\.0/);
    assert.match(page.text, /Browser-There\/2\.0 &lt;b&gt;/);
    assert.match(page.text, /this session/);
    const ids = await t.deps.db.selectFrom('sessions').select(['public_id', 'user_agent', 'account_id']).execute();
    const theirs = ids.find((r) => r.user_agent === 'Browser-There/2.0 <b>')!;
    const strangers = ids.find((r) => r.account_id === stranger.account.id)!;
    assert.ok(!page.text.includes(strangers.public_id), 'only own sessions are listed');

    assert.equal((await here.post('/profile/sessions/end', { session: strangers.public_id })).location, '/profile?notice=session-ended');
    assert.equal((await stranger.client.get('/')).status, 200, 'a foreign session is untouched');
    assert.equal((await here.post('/profile/sessions/end', { session: 'no-such-session' })).location, '/profile?notice=session-ended');

    assert.equal((await here.post('/profile/sessions/end', { session: theirs.public_id })).location, '/profile?notice=session-ended');
    assert.equal((await there.get('/')).location, '/login');
    assert.equal((await here.get('/')).status, 200);

    const own = ids.find((r) => r.user_agent === 'Browser-Here/1.0')!;
    const out = await here.post('/profile/sessions/end', { session: own.public_id });
    assert.equal(out.location, '/login?notice=signed-out');
    assert.equal((await here.get('/')).location, '/login');
  });
});

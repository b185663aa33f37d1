import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { sha256 } from '../../deps.ts';

function sessionCookie(res: { headers: Headers }): string {
  return res.headers.getSetCookie().find((c) => c.includes('svc_session='))!;
}

/** The documented session lifetime (README): 12 hours without a request, 7 days after sign-in. */
const SESSION_IDLE_MS = 12 * 60 * 60_000;
const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60_000;

forEachDialect((getDb) => {
  test('password sign-in lands on the home page with name and role; sign-out ends the session', async () => {
    const t = buildTestApp(getDb());
    const alice = await buildAccount(t, { username: 'Alice', role: 'viewer' });
    const c = t.client();
    const res = await c.post('/login', { username: 'alice', password: alice.password });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/');
    const cookie = sessionCookie(res);
    assert.match(cookie, /^svc_session=[A-Za-z0-9_-]{43};/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/);

    const id = c.cookies.get('svc_session')!;
    const rows = await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', alice.id).execute();
    assert.deepEqual(rows, [{ id_hash: sha256(id) }], 'only the SHA-256 of the cookie is stored');

    const home = await c.get('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /Alice/);
    assert.match(home.text, /viewer/);
    assert.match(home.text, /Sign out/);

    const out = await c.post('/logout');
    assert.equal(out.location, '/login?notice=signed-out');
    const replay = t.client();
    replay.cookies.set('svc_session', id);
    assert.equal((await replay.get('/')).location, '/login', 'the old cookie no longer works');
  });

  test('secure cookies use the __Host- prefix and Secure', async () => {
    const t = buildTestApp(getDb(), { secureCookies: true });
    const a = await buildAccount(t);
    const res = await t
      .client()
      .post('/login', { username: a.username, password: a.password }, { origin: 'https://localhost' });
    assert.equal(res.status, 303);
    const cookie = res.headers.getSetCookie()[0]!;
    assert.match(cookie, /^__Host-svc_session=/);
    assert.match(cookie, /Secure/);
    assert.match(cookie, /Path=\//);
    assert.doesNotMatch(cookie, /Domain=/);
    assert.equal(res.headers.get('strict-transport-security'), 'max-age=31536000');
  });

  test('usernames match ignoring case and Unicode normalisation form', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t, { username: 'Jos\u00e9' });
    const res = await t.client().post('/login', { username: 'JOSE\u0301', password: a.password });
    assert.equal(res.status, 303);
  });

  test('every sign-in issues a new session id', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const c = await signIn(t, a);
    const first = c.cookies.get('svc_session');
    await c.get('/login');
    await c.post('/logout');
    await c.post('/login', { username: a.username, password: a.password });
    assert.notEqual(c.cookies.get('svc_session'), first);
  });

  test('unknown user and wrong password get the same answer', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const wrong = await t.client().post('/login', { username: a.username, password: 'not the password' });
    const unknown = await t.client().post('/login', { username: 'nobody-here', password: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    const message = (html: string) => /class="notice error"[^>]*>([^<]*)</.exec(html)?.[1];
    assert.equal(message(wrong.text), 'Incorrect username or password.');
    assert.equal(message(unknown.text), message(wrong.text));
  });

  test('repeated failures lock the account for that address for a while, then the lock lifts by itself', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const attacker = t.client();
    attacker.address = '198.51.100.7';
    for (let i = 0; i < 5; i++)
      assert.equal((await attacker.post('/login', { username: a.username, password: `guess-${i}-guess` })).status, 401);
    const locked = await attacker.post('/login', { username: a.username, password: a.password });
    assert.equal(locked.status, 429, 'even the right password is refused while locked');
    assert.match(locked.text, /Too many failed attempts/);
    const owner = t.client();
    owner.address = '203.0.113.9';
    assert.equal(
      (await owner.post('/login', { username: a.username, password: a.password })).status,
      303,
      'the owner elsewhere is not locked out',
    );
    t.clock.advance(15 * 60_000 + 1);
    assert.equal((await attacker.post('/login', { username: a.username, password: a.password })).status, 303);
  });

  test('guessing one account from many addresses locks the account everywhere', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    for (let i = 0; i < 50; i++) {
      const bot = t.client();
      bot.address = `198.18.${Math.floor(i / 4)}.${(i % 4) + 1}`;
      assert.equal((await bot.post('/login', { username: a.username, password: `guess-${i}-guess` })).status, 401);
    }
    const owner = t.client();
    owner.address = '203.0.113.9';
    assert.equal((await owner.post('/login', { username: a.username, password: a.password })).status, 429);
  });

  test('a burst of concurrent guesses gets no more checks than the limit allows', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const c = t.client();
        c.address = '198.51.100.8';
        return c.post('/login', { username: a.username, password: `burst-${i}-guess` });
      }),
    );
    assert.equal(results.filter((r) => r.status === 401).length, 5, 'exactly five guesses were checked');
    assert.equal(results.filter((r) => r.status === 429).length, 15);
  });

  test('repeated failures from one address lock that address across usernames; IPv6 by its /64', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const sprayer = t.client();
    sprayer.address = '192.0.2.44';
    for (let i = 0; i < 30; i++) await sprayer.post('/login', { username: `someone-${i}`, password: 'password123' });
    assert.equal((await sprayer.post('/login', { username: a.username, password: a.password })).status, 429);
    const other = t.client();
    other.address = '192.0.2.45';
    assert.equal((await other.post('/login', { username: a.username, password: a.password })).status, 303);

    for (let i = 0; i < 30; i++) {
      const v6 = t.client();
      v6.address = `2001:db8:7:7::${(i + 1).toString(16)}`;
      await v6.post('/login', { username: `spray-${i}`, password: 'password123' });
    }
    const sameSubnet = t.client();
    sameSubnet.address = '2001:db8:7:7::ffff';
    assert.equal((await sameSubnet.post('/login', { username: a.username, password: a.password })).status, 429);
  });

  test('sessions end after the idle lifetime and after the absolute lifetime', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const idle = await signIn(t, a);
    t.clock.advance(SESSION_IDLE_MS - 60_000);
    assert.equal((await idle.get('/')).status, 200, 'activity inside the idle window keeps it alive');
    t.clock.advance(SESSION_IDLE_MS + 1);
    assert.equal((await idle.get('/')).location, '/login');

    const busy = await signIn(t, a);
    for (let elapsed = 0; elapsed < SESSION_ABSOLUTE_MS; elapsed += SESSION_IDLE_MS / 2) {
      t.clock.advance(SESSION_IDLE_MS / 2);
      const res = await busy.get('/');
      if (elapsed + SESSION_IDLE_MS / 2 >= SESSION_ABSOLUTE_MS) assert.equal(res.location, '/login');
    }
    assert.equal((await busy.get('/')).location, '/login');
  });

  test('the role is read on every request: a demotion takes effect on the next request', async () => {
    const t = buildTestApp(getDb());
    const admin = await buildAccount(t, { role: 'admin' });
    const c = await signIn(t, admin);
    assert.equal((await c.get('/settings')).status, 200);
    await t.deps.db.updateTable('accounts').set({ role: 'viewer' }).where('id', '=', admin.id).execute();
    assert.equal((await c.get('/settings')).status, 403);
    await t.deps.db.updateTable('accounts').set({ role: 'admin' }).where('id', '=', admin.id).execute();
    assert.equal((await c.get('/settings')).status, 200);
  });

  test('control characters in the name or password get the usual answer and reach no query (PostgreSQL refuses NUL)', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t, { username: 'admin-nul' });
    for (const fields of [
      { username: 'admin\u0000-nul', password: a.password },
      { username: 'admin-nul\u0000', password: a.password },
      { username: 'admin-nul', password: `${a.password}\u0000` },
      { username: 'admin\u001b-nul', password: a.password },
      { username: 'admin-nul', password: `\u007f${a.password}` },
    ]) {
      const c = t.client();
      c.address = '192.0.2.150';
      const res = await c.post('/login', fields);
      assert.equal(res.status, 401, JSON.stringify(fields));
      assert.match(res.text, /Incorrect username or password\./);
      assert.doesNotMatch(res.text, /\u0000|\u001b|\u007f/);
    }
    const keys = await t.deps.db.selectFrom('auth_throttle').select('key').execute();
    assert.ok(
      keys.every((k) => !/[\u0000-\u001f\u007f]/.test(k.key)),
      'no control character reached the throttle table',
    );
  });

  test('bad sign-in input is a 4xx page, never a 500', async () => {
    const t = buildTestApp(getDb());
    for (const fields of [{}, { username: 'x'.repeat(5000), password: 'y' }, { username: ['a', 'b'], password: 'z' }]) {
      const res = await t.client().post('/login', fields as Record<string, string>);
      assert.ok(res.status >= 400 && res.status < 500, `${res.status} for ${JSON.stringify(fields).slice(0, 40)}`);
    }
  });
});

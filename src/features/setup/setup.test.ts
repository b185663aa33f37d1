import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { prepareSetupToken } from './setup.service.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('setup_tokens').execute();
    await getDb().db.deleteFrom('meta').execute();
    await getDb().db.deleteFrom('sessions').execute();
    await getDb().db.deleteFrom('accounts').execute();
    t = buildTestApp(getDb());
  });

  test('the setup link creates the first admin once; afterwards /setup redirects to /login', async () => {
    const token = (await prepareSetupToken(t.deps))!;
    assert.ok(token.length >= 43, 'a generated token carries at least 256 bits');
    const c = t.client();
    const page = await c.get(`/setup?token=${token}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('referrer-policy'), 'strict-origin');
    assert.match(page.text, /Create administrator/);
    const res = await c.post('/setup', { token, username: '  Alice  ', password: 'a long password' });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/login?notice=setup-done');
    const accounts = await t.deps.db.selectFrom('accounts').select(['username', 'role', 'password_hash']).execute();
    assert.deepEqual(
      accounts.map((a) => [a.username, a.role]),
      [['Alice', 'admin']],
    );
    assert.match(accounts[0]!.password_hash, /^\$argon2id\$/);
    assert.equal((await c.get('/setup')).location, '/login');
    assert.equal(
      (await c.post('/setup', { token, username: 'mallory', password: 'a long password' })).location,
      '/login',
    );
    assert.equal((await t.deps.db.selectFrom('accounts').select('id').execute()).length, 1);
  });

  test('a wrong, missing or pinned-mismatch token creates nothing', async () => {
    await prepareSetupToken(t.deps);
    const c = t.client();
    for (const token of ['', 'wrong-token-wrong-token-wrong-token']) {
      const res = await c.post('/setup', { token, username: 'alice', password: 'a long password' });
      assert.equal(res.status, 400);
      assert.match(res.text, /setup token is not valid/);
    }
    // The summary lists the token's problem first, as its field comes first.
    const two = await c.post('/setup', { token: 'wrong-token', username: 'alice', password: 'short' });
    assert.match(
      two.text,
      /<h2 id="setup-summary">There are 2 problems<\/h2><ul><li><a href="#setup-token">This setup token is not valid\.<\/a><\/li><li><a href="#setup-password">/,
    );
    const missing = await c.post('/setup', { username: 'alice', password: 'a long password' });
    assert.equal(missing.status, 400);
    assert.equal((await t.deps.db.selectFrom('accounts').select('id').execute()).length, 0);
  });

  test('SVC_SETUP_TOKEN pins the token', async () => {
    const pinned = buildTestApp(getDb(), { setupToken: 'pinned-setup-token-1234' });
    assert.equal(await prepareSetupToken(pinned.deps), 'pinned-setup-token-1234');
    const c = pinned.client();
    assert.equal(
      (await c.post('/setup', { token: 'pinned-setup-token-9999', username: 'a', password: 'a long password' })).status,
      400,
    );
    assert.equal(
      (await c.post('/setup', { token: 'pinned-setup-token-1234', username: 'a', password: 'a long password' })).status,
      303,
    );
  });

  test('a mixed-script username is a field error at setup; a single-script non-Latin one is accepted', async () => {
    const token = (await prepareSetupToken(t.deps))!;
    const c = t.client();
    const mixed = await c.post('/setup', { token, username: '\u0430dmin', password: 'a long password' });
    assert.equal(mixed.status, 400);
    assert.match(mixed.text, /cannot mix letters of different scripts/);
    assert.match(mixed.text, /aria-invalid="true"/);
    assert.equal((await t.deps.db.selectFrom('accounts').select('id').execute()).length, 0);
    assert.equal((await c.post('/setup', { token, username: 'дмитрий', password: 'a long password' })).status, 303);
    const rows = await t.deps.db.selectFrom('accounts').select(['username', 'username_skeleton']).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.username, 'дмитрий');
    assert.ok(rows[0]!.username_skeleton, 'the skeleton is stored');
  });

  test('two racing setup posts create exactly one account', async () => {
    const token = (await prepareSetupToken(t.deps))!;
    const results = await Promise.all(
      ['first', 'second', 'third', 'fourth'].map((username) =>
        t.client().post('/setup', { token, username, password: 'a long password' }),
      ),
    );
    assert.ok(results.every((r) => r.status === 303));
    assert.equal(results.filter((r) => r.location === '/login?notice=setup-done').length, 1);
    const accounts = await t.deps.db.selectFrom('accounts').select('role').execute();
    assert.deepEqual(accounts, [{ role: 'admin' }]);
  });

  test('bad input is a form error, never a 500', async () => {
    const token = (await prepareSetupToken(t.deps))!;
    const c = t.client();
    const cases: [Record<string, string>, RegExp][] = [
      [{ token, username: 'x'.repeat(65), password: 'a long password' }, /at most 64 characters/],
      [{ token, username: '   ', password: 'a long password' }, /Enter a username/],
      [{ token, username: 'ok', password: 'short' }, /at least 8 characters/],
      [{ token, username: 'ok', password: 'p'.repeat(73) }, /at most 72 characters/],
      [{ token, username: 'ok' }, /Enter a password|expected string/i],
    ];
    for (const [fields, message] of cases) {
      const res = await c.post('/setup', fields);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.match(res.text, message);
    }
    // 72 code points of a 4-byte character are fine; 73 are not.
    assert.equal((await c.post('/setup', { token, username: 'emoji', password: '😀'.repeat(73) })).status, 400);
    assert.equal((await c.post('/setup', { token, username: 'emoji', password: '😀'.repeat(72) })).status, 303);
  });
  test('while no account exists, / and /login say setup is pending and where the link is, instead of a sign-in form', async () => {
    const c = t.client();
    assert.equal((await c.get('/')).location, '/login');
    const page = await c.get('/login');
    assert.equal(page.status, 200);
    assert.match(page.text, /not set up yet/);
    assert.match(page.text, /in its log/);
    assert.match(page.text, /SVC_SETUP_TOKEN/);
    assert.match(page.text, /<a href="\/setup">/);
    assert.doesNotMatch(page.text, /name="password"/, 'no sign-in form for accounts that do not exist');
    const token = (await prepareSetupToken(t.deps))!;
    assert.equal((await c.post('/setup', { token, username: 'first', password: 'a long password' })).status, 303);
    assert.match((await c.get('/login')).text, /name="password"/, 'once an account exists, the sign-in form is back');
  });
});

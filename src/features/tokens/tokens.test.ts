import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signIn, signedInAs } from '../../../test/helpers/factories.ts';
import { sha256 } from '../../deps.ts';

const DAY = 24 * 60 * 60 * 1000;

async function mint(client: TestClient, name: string, expiry?: string): Promise<string> {
  const res = await client.post('/profile/tokens', expiry === undefined ? { name } : { name, expiry });
  assert.equal(res.status, 200);
  const m = /id="new-token">(svc_pat_[A-Za-z0-9_-]{43})</.exec(res.text);
  assert.ok(m, 'the new token is shown');
  return m[1]!;
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp(getDb());
  });

  const me = (token: string, path = '/api/me') => t.client().get(path, { authorization: `Bearer ${token}` });

  test('a minted token is shown once, stored as its SHA-256, and listed with created, expires and last used', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const token = await mint(client, 'ci <deploy>');
    assert.match(token, /^svc_pat_[A-Za-z0-9_-]{43}$/, 'prefix plus 256 bits');
    const rows = await t.deps.db.selectFrom('api_tokens').selectAll().where('account_id', '=', account.id).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.token_hash, sha256(token));
    assert.equal(rows[0]!.expires_at, t.clock.now() + 90 * DAY, 'default lifetime is 90 days');
    assert.ok(!JSON.stringify(rows).includes(token));
    const page = await client.get('/profile');
    assert.ok(!page.text.includes(token), 'never shown again');
    assert.ok(!page.text.includes(rows[0]!.token_hash));
    assert.match(page.text, /ci &lt;deploy&gt;/);
    assert.match(page.text, /2026-04-15 12:00 UTC/, 'expiry shown');
    assert.match(page.text, /<td>never<\/td>/, 'not used yet');
  });

  test('GET /api/me answers with the username and the role read on each request', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const token = await mint(client, 'script');
    const res = await me(token);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(JSON.parse(res.text), { username: account.username, role: 'viewer' });
    await t.deps.db.updateTable('accounts').set({ role: 'admin' }).where('id', '=', account.id).execute();
    assert.deepEqual(JSON.parse((await me(token)).text), { username: account.username, role: 'admin' });
  });

  test('/api/ takes bearer tokens only, and tokens never open HTML pages', async () => {
    const { client } = await signedInAs(t, 'admin');
    const token = await mint(client, 'x');
    const anonymous = t.client();
    const cases: [string, Record<string, string>][] = [
      ['no header', {}],
      ['basic', { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` }],
      ['unknown token', { authorization: `Bearer svc_pat_${'A'.repeat(43)}` }],
      ['malformed', { authorization: `Bearer ${token}x` }],
      ['bare token', { authorization: token }],
    ];
    for (const [name, headers] of cases) {
      const res = await anonymous.get('/api/me', headers);
      assert.equal(res.status, 401, name);
      assert.deepEqual(JSON.parse(res.text), { error: 'unauthorized' });
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    assert.equal((await anonymous.get('/api/me', { authorization: `bearer  ${token}` })).status, 200, 'the scheme is case-insensitive');
    // A signed-in browser's cookie does not authenticate the API.
    assert.equal((await client.get('/api/me')).status, 401);
    // A token does not open a page or mint another token.
    for (const path of ['/', '/profile', '/settings']) {
      assert.equal((await anonymous.get(path, { authorization: `Bearer ${token}` })).location, '/login', path);
    }
    const before = await t.deps.db.selectFrom('api_tokens').select('id').execute();
    const viaToken = await anonymous.post('/profile/tokens', { name: 'sneaky' }, { authorization: `Bearer ${token}` });
    assert.equal(viaToken.location, '/login');
    assert.equal((await anonymous.post('/api/tokens', { name: 'sneaky' }, { authorization: `Bearer ${token}` })).status, 404);
    assert.equal((await t.deps.db.selectFrom('api_tokens').select('id').execute()).length, before.length);
  });

  test('expiry: the chosen lifetime, the 90-day default, and no expiry', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const week = await mint(client, 'week', '7');
    const standard = await mint(client, 'standard');
    const forever = await mint(client, 'forever', 'never');
    t.clock.advance(7 * DAY - 1);
    assert.equal((await me(week)).status, 200);
    t.clock.advance(1);
    assert.equal((await me(week)).status, 401);
    // (The browser session itself has timed out by now: sign in again to see the list.)
    assert.match((await (await signIn(t, account)).get('/profile')).text, /<span class="badge">expired<\/span>/);
    t.clock.advance(83 * DAY - 1);
    assert.equal((await me(standard)).status, 200);
    t.clock.advance(1);
    assert.equal((await me(standard)).status, 401);
    t.clock.advance(3650 * DAY);
    assert.equal((await me(forever)).status, 200);
    const fresh = await signIn(t, account);
    for (const [fields, message] of [
      [{ name: '   ' }, /Give the token a name/],
      [{ name: 'n'.repeat(101) }, /at most 100 characters/],
      [{ name: 'ok', expiry: 'forever' }, /offered lifetimes/],
      [{ name: 'ok', expiry: 'constructor' }, /offered lifetimes/],
    ] as const) {
      const res = await fresh.post('/profile/tokens', fields);
      assert.equal(res.status, 400);
      assert.match(res.text, message);
    }
  });

  test('last used is written at most once a minute', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const token = await mint(client, 'poller');
    const lastUsed = async () =>
      (await t.deps.db.selectFrom('api_tokens').select('last_used_at').where('account_id', '=', account.id).executeTakeFirstOrThrow()).last_used_at;
    const start = t.clock.now();
    await me(token);
    assert.equal(await lastUsed(), start);
    t.clock.advance(59_999);
    await me(token);
    assert.equal(await lastUsed(), start);
    t.clock.advance(1);
    await me(token);
    assert.equal(await lastUsed(), start + 60_000);
    assert.match((await client.get('/profile')).text, /2026-01-15 12:01 UTC/);
  });

  test('revoking: own tokens stop working; a foreign or stale id is a no-op; a removed account loses its tokens', async () => {
    const alice = await signedInAs(t, 'viewer');
    const bob = await signedInAs(t, 'viewer');
    const aliceToken = await mint(alice.client, 'a');
    const bobToken = await mint(bob.client, 'b');
    const bobRow = await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', bob.account.id).executeTakeFirstOrThrow();
    const aliceRow = await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', alice.account.id).executeTakeFirstOrThrow();

    assert.equal((await alice.client.post('/profile/tokens/revoke', { token: bobRow.id })).location, '/profile?notice=token-revoked');
    assert.equal((await me(bobToken)).status, 200, 'a foreign id is a no-op');
    assert.equal((await alice.client.post('/profile/tokens/revoke', { token: 'stale' })).location, '/profile?notice=token-revoked');
    await alice.client.post('/profile/tokens/revoke', { token: aliceRow.id });
    assert.equal((await me(aliceToken)).status, 401);
    assert.match((await alice.client.get('/profile?notice=token-revoked')).text, /The token no longer works/);

    await t.deps.db.deleteFrom('accounts').where('id', '=', bob.account.id).execute();
    assert.equal((await me(bobToken)).status, 401);
  });
});

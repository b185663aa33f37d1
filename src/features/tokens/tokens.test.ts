import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, signedInAs, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { confirmItsMe, submitMinting } from '../../../test/helpers/once.ts';
import { enrolTotp, signInWithTotp } from '../../../test/helpers/second-factor.ts';
import { buildPasskeys } from '../../../test/helpers/team-factories.ts';
import { newFormToken } from '../auth/reveals.service.ts';
import { totpCode } from '../second-factor/totp.ts';
import { sha256 } from '../../deps.ts';

const DAY = 24 * 60 * 60 * 1000;

const REVEAL_PATH = '/profile?reveal=token#profile-tokens';
const NEW_TOKEN = /id="new-token">(svc_pat_[A-Za-z0-9_-]{43})</;

/** Confirms the session's password, mints a token (POST, redirect, GET) and returns it as shown on the page after. */
async function mint(client: TestClient, name: string, expiry?: string): Promise<string> {
  await confirmItsMe(client, TEST_PASSWORD);
  const { post, page } = await submitMinting(
    client,
    '/profile',
    '/profile/tokens',
    expiry === undefined ? { name } : { name, expiry },
  );
  assert.equal(post.status, 303);
  assert.equal(post.location, REVEAL_PATH);
  const m = NEW_TOKEN.exec(page!.text);
  assert.ok(m, 'the new token is shown on the page after the redirect');
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
    assert.match(page.text, /<td><span class="cell-label">Last used: <\/span>never<\/td>/, 'not used yet');
  });

  test('GET /api/me answers with the username, the role and the second-factor kinds read on each request', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const token = await mint(client, 'script');
    const res = await me(token);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const tokenId = (
      await t.deps.db
        .selectFrom('api_tokens')
        .select('id')
        .where('account_id', '=', account.id)
        .executeTakeFirstOrThrow()
    ).id;
    assert.deepEqual(JSON.parse(res.text), {
      id: account.id,
      username: account.username,
      role: 'viewer',
      second_factors: [],
      token: { id: tokenId, read_only: false },
    });
    await t.deps.db.updateTable('accounts').set({ role: 'admin' }).where('id', '=', account.id).execute();
    assert.equal(JSON.parse((await me(token)).text).role, 'admin');
    // Its passkeys are listed as a kind: never a credential id or public key.
    const keys = await buildPasskeys(t, account.id, 2);
    const withKeys = await me(token);
    assert.deepEqual(JSON.parse(withKeys.text).second_factors, ['passkey']);
    for (const key of keys)
      assert.ok(!withKeys.text.includes(key.credential_id) && !withKeys.text.includes(key.public_key));
    await t.deps.db.updateTable('accounts').set({ totp_enabled: 1 }).where('id', '=', account.id).execute();
    assert.deepEqual(JSON.parse((await me(token)).text).second_factors, ['totp', 'passkey']);
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
      assert.equal(JSON.parse(res.text).type, 'urn:svc:problem:unauthorized');
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    assert.equal(
      (await anonymous.get('/api/me', { authorization: `bearer  ${token}` })).status,
      200,
      'the scheme is case-insensitive',
    );
    // A signed-in browser's cookie does not authenticate the API.
    assert.equal((await client.get('/api/me')).status, 401);
    // A token does not open a page or mint another token.
    for (const path of ['/', '/profile', '/settings']) {
      assert.equal((await anonymous.get(path, { authorization: `Bearer ${token}` })).location, '/login', path);
    }
    const before = await t.deps.db.selectFrom('api_tokens').select('id').execute();
    const viaToken = await anonymous.post('/profile/tokens', { name: 'sneaky' }, { authorization: `Bearer ${token}` });
    assert.equal(viaToken.location, '/login');
    const viaApi = await anonymous.post('/api/tokens', { name: 'sneaky' }, { authorization: `Bearer ${token}` });
    assert.equal(viaApi.status, 415, 'a form is no API request; the API lists and revokes tokens, never mints');
    assert.equal((await t.deps.db.selectFrom('api_tokens').select('id').execute()).length, before.length);
  });

  test('a token minted read-only says so once and in the list, reads through the API, and every write through it is 403', async () => {
    const { account, client } = await signedInAs(t, 'admin');
    await confirmItsMe(client, TEST_PASSWORD);
    const form = await client.get('/profile');
    assert.match(form.text, /<input id="token-mint-read_only" type="checkbox" name="read_only" value="on"/);
    assert.match(
      form.text,
      /<label for="token-mint-read_only">Read-only \(can only read, never change anything\)<\/label>/,
    );
    const { post, page } = await submitMinting(client, '/profile', '/profile/tokens', {
      name: 'dashboard',
      read_only: 'on',
    });
    assert.equal(post.location, REVEAL_PATH);
    assert.match(
      page!.text,
      /Read-only token “dashboard” created: it can read through the API but never change anything\./,
    );
    const token = NEW_TOKEN.exec(page!.text)![1]!;
    const row = await t.deps.db
      .selectFrom('api_tokens')
      .select(['id', 'read_only'])
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.read_only, 1);
    assert.match((await client.get('/profile')).text, /<td>dashboard <span class="badge">read-only<\/span><\/td>/);

    const res = await me(token);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.text).token, { id: row.id, read_only: true });
    const write = await t
      .client()
      .request(`/api/tokens/${row.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    assert.equal(write.status, 403);
    assert.equal(JSON.parse(write.text).type, 'urn:svc:problem:read-only-token');
    assert.equal((await me(token)).status, 200, 'not revoked: the write was refused');

    // Unticked, a token may write (an admin's token here revokes itself).
    const writer = await mint(client, 'deploy');
    const writerRow = await t.deps.db
      .selectFrom('api_tokens')
      .select(['id', 'read_only'])
      .where('name', '=', 'deploy')
      .executeTakeFirstOrThrow();
    assert.equal(writerRow.read_only, 0);
    assert.doesNotMatch((await client.get('/profile')).text, /<td>deploy <span class="badge">read-only/);
    const revoked = await t
      .client()
      .request(`/api/tokens/${writerRow.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${writer}` } });
    assert.equal(revoked.status, 204);
  });

  test('a refused mint keeps the read-only box as it was ticked', async () => {
    const { client } = await signedInAs(t, 'viewer');
    await confirmItsMe(client, TEST_PASSWORD);
    const { post } = await submitMinting(client, '/profile', '/profile/tokens', { name: '  ', read_only: 'on' });
    assert.equal(post.status, 400);
    assert.match(post.text, /<input id="token-mint-read_only" type="checkbox" name="read_only" value="on" checked=""/);
  });

  test('expiry: the chosen lifetime, the 90-day default, and no expiry', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    assert.deepEqual(
      [...(await client.get('/profile')).text.matchAll(/<option value="([^"]+)"/g)]
        .map((m) => m[1])
        .filter((v) => v !== undefined),
      [],
      'no lifetime is offered before confirming',
    );
    await confirmItsMe(client, TEST_PASSWORD);
    const offered = [...(await client.get('/profile')).text.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(offered, ['30', '90', '365', 'never']);
    const month = await mint(client, 'month', '30');
    const standard = await mint(client, 'standard');
    const forever = await mint(client, 'forever', 'never');
    const year = await mint(client, 'year', '365');
    t.clock.advance(30 * DAY - 1);
    assert.equal((await me(month)).status, 200);
    t.clock.advance(1);
    assert.equal((await me(month)).status, 401);
    // (The browser session itself has timed out by now: sign in again to see the list.)
    assert.match((await (await signIn(t, account)).get('/profile')).text, /<span class="badge">expired<\/span>/);
    t.clock.advance(60 * DAY - 1);
    assert.equal((await me(standard)).status, 200);
    t.clock.advance(1);
    assert.equal((await me(standard)).status, 401);
    t.clock.advance(275 * DAY - 1);
    assert.equal((await me(year)).status, 200);
    t.clock.advance(1);
    assert.equal((await me(year)).status, 401);
    t.clock.advance(3650 * DAY);
    assert.equal((await me(forever)).status, 200);
    const fresh = await signIn(t, account);
    await confirmItsMe(fresh, TEST_PASSWORD);
    for (const [fields, message] of [
      [{ name: '   ' }, /Give the token a name/],
      [{ name: 'n'.repeat(101) }, /at most 100 characters/],
      [{ name: 'ok', expiry: '7' }, /offered lifetimes/],
      [{ name: 'ok', expiry: 'forever' }, /offered lifetimes/],
      [{ name: 'ok', expiry: 'constructor' }, /offered lifetimes/],
    ] as const) {
      const { post: res } = await submitMinting(fresh, '/profile', '/profile/tokens', fields);
      assert.equal(res.status, 400);
      assert.match(res.text, message);
      assert.match(res.text, /class="error-summary"/);
    }
    assert.equal(
      (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', account.id).execute()).length,
      4,
    );
  });

  test('last used is written at most once a minute', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const token = await mint(client, 'poller');
    const lastUsed = async () =>
      (
        await t.deps.db
          .selectFrom('api_tokens')
          .select('last_used_at')
          .where('account_id', '=', account.id)
          .executeTakeFirstOrThrow()
      ).last_used_at;
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
    const bobRow = await t.deps.db
      .selectFrom('api_tokens')
      .select('id')
      .where('account_id', '=', bob.account.id)
      .executeTakeFirstOrThrow();
    const aliceRow = await t.deps.db
      .selectFrom('api_tokens')
      .select('id')
      .where('account_id', '=', alice.account.id)
      .executeTakeFirstOrThrow();

    assert.equal(
      (await alice.client.post('/profile/tokens/revoke', { token: bobRow.id })).location,
      '/profile?notice=token-revoked',
    );
    assert.equal((await me(bobToken)).status, 200, 'a foreign id is a no-op');
    assert.equal(
      (await alice.client.post('/profile/tokens/revoke', { token: 'stale' })).location,
      '/profile?notice=token-revoked',
    );
    await alice.client.post('/profile/tokens/revoke', { token: aliceRow.id });
    assert.equal((await me(aliceToken)).status, 401);
    assert.match((await alice.client.get('/profile?notice=token-revoked')).text, /The token no longer works/);

    await t.deps.db.deleteFrom('accounts').where('id', '=', bob.account.id).execute();
    assert.equal((await me(bobToken)).status, 401);
  });
  test('a token name is unique among the account\u2019s own unexpired tokens: a second one is refused at its field', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const other = await signedInAs(t, 'viewer');
    const count = async (id = account.id) =>
      (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', id).execute()).length;
    await mint(client, 'ci script');
    await mint(other.client, 'ci script'); // another account's names are its own
    // Same name, whatever the case and surrounding spaces: refused at the field, nothing minted, the values kept.
    for (const name of ['ci script', '  CI Script ']) {
      const { post } = await submitMinting(client, '/profile', '/profile/tokens', {
        name,
        expiry: '30',
        read_only: 'on',
      });
      assert.equal(post.status, 409, name);
      assert.ok(
        post.text.includes(
          `You already have a token named “${name.trim()}”. Choose another name, or revoke that token first.`,
        ),
        name,
      );
      assert.match(post.text, /<form[^>]*id="token-mint"/, 'the form is shown again with its error');
      assert.ok(post.text.includes(`name="name" type="text" value="${name.trim()}"`), 'the typed name is kept');
      assert.match(post.text, /<option value="30" selected/);
      assert.match(post.text, /name="read_only"[^>]*checked/);
    }
    assert.equal(await count(), 1);
    assert.equal(await count(other.account.id), 1);
    // An expired token or a revoked one no longer holds its name.
    await mint(client, 'short', '30');
    t.clock.advance(31 * DAY);
    const later = await signIn(t, account); // the first session has expired meanwhile
    await mint(later, 'short');
    const row = await t.deps.db
      .selectFrom('api_tokens')
      .select('id')
      .where('account_id', '=', account.id)
      .where('name', '=', 'ci script')
      .executeTakeFirstOrThrow();
    await later.post('/profile/tokens/revoke', { token: row.id });
    await mint(later, 'ci script');
    assert.equal(await count(), 3);
  });

  test('revoking asks first: the step names the token by name and id, its button revokes, Cancel leaves it', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const stranger = await signedInAs(t, 'viewer');
    const first = await mint(client, 'ci script');
    const second = await mint(client, 'ci script 2');
    const rows = await t.deps.db
      .selectFrom('api_tokens')
      .select(['id', 'name'])
      .where('account_id', '=', account.id)
      .execute();
    const row = rows.find((r) => r.name === 'ci script')!;
    const short = row.id.slice(0, 8);
    const list = (await client.get('/profile')).text;
    // The list revokes nothing itself: each row links to its step, and rows differ by their id.
    assert.ok(!list.includes('action="/profile/tokens/revoke"'), 'no revoke form in the list');
    for (const r of rows) assert.match(list, new RegExp(`<code>${r.id.slice(0, 8)}</code>`));
    assert.ok(list.includes(`href="/profile?revoke=${encodeURIComponent(row.id)}#token-revoke"`));
    assert.ok(list.includes(`aria-label="Revoke… “ci script” (ID ${short})"`));

    const step = (await client.get(`/profile?revoke=${encodeURIComponent(row.id)}`)).text;
    assert.match(step, /id="token-revoke"/);
    assert.ok(step.includes(`Revoke the token “ci script” (ID ${short})?`));
    assert.match(step, /This cannot be undone/);
    assert.match(step, /<a href="\/profile#profile-tokens">Cancel<\/a>/);
    assert.ok(step.includes(`<input type="hidden" name="token" value="${row.id}"/>`));
    assert.ok(!step.includes(first) && !step.includes(second), 'never the secret');
    assert.equal((await me(first)).status, 200, 'showing the step revokes nothing');
    // A stale or foreign id shows no step.
    const strangerRow = await t.deps.db
      .selectFrom('api_tokens')
      .select('id')
      .where('account_id', '=', stranger.account.id)
      .executeTakeFirst();
    for (const id of ['stale', strangerRow?.id ?? 'none'])
      assert.doesNotMatch((await client.get(`/profile?revoke=${id}`)).text, /id="token-revoke"/);

    const done = await client.post('/profile/tokens/revoke', { token: row.id });
    assert.equal(done.location, '/profile?notice=token-revoked');
    assert.equal((await me(first)).status, 401);
    assert.equal((await me(second)).status, 200, 'the other token still works');
  });

  test('minting needs "Confirm it\u2019s you" within the last 10 minutes of this very session', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const count = async () =>
      (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', account.id).execute()).length;
    const before = await client.get('/profile');
    assert.match(before.text, /Confirm it\u2019s you/);
    assert.ok(!before.text.includes('id="token-mint"'), 'the mint form waits for the confirmation');
    // A post anyway (a stale page, a stolen session) mints nothing.
    const refused = await client.post('/profile/tokens', { name: 'sneaky', _once: newFormToken() });
    assert.equal(refused.location, '/profile?notice=confirm-first-tokens#profile-tokens');
    assert.equal(await count(), 0);

    const wrong = await client.post('/profile/reauth', { secret: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /id="confirm-secret-error">Incorrect password\./);
    const ok = await client.post('/profile/reauth', { secret: TEST_PASSWORD });
    assert.equal(ok.location, '/profile?notice=confirmed#profile-confirm');
    const row = await t.deps.db
      .selectFrom('sessions')
      .select('reauthed_at')
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.reauthed_at, t.clock.now());
    assert.match((await client.get('/profile')).text, /id="token-mint"/);

    // Another session of the same account is not confirmed by it.
    const other = await signIn(t, account);
    assert.equal(
      (await other.post('/profile/tokens', { name: 'other', _once: newFormToken() })).location,
      '/profile?notice=confirm-first-tokens#profile-tokens',
    );

    t.clock.advance(10 * 60_000 - 1);
    assert.equal(
      (await client.post('/profile/tokens', { name: 'in time', _once: newFormToken() })).location,
      REVEAL_PATH,
    );
    t.clock.advance(1);
    assert.equal(
      (await client.post('/profile/tokens', { name: 'too late', _once: newFormToken() })).location,
      '/profile?notice=confirm-first-tokens#profile-tokens',
    );
    assert.equal(await count(), 1);
  });

  test('an account with an authenticator confirms with a current code too, spent like a sign-in code', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    const client = await signInWithTotp(t, account, secret);
    assert.match((await client.get('/profile')).text, /Password or authenticator code/);
    const code = totpCode(secret, t.clock.now());
    assert.equal((await client.post('/profile/reauth', { secret: code })).status, 303);
    // The same code again (a replay, still inside the drift window) is refused, and so is a wrong one.
    t.clock.advance(30_000);
    const second = await signInWithTotp(t, account, secret);
    await second.get('/profile');
    assert.equal((await second.post('/profile/reauth', { secret: code })).status, 401);
    assert.equal((await second.post('/profile/reauth', { secret: '000000' })).status, 401);
    assert.ok(await mint(client, 'after a code'));
  });

  test('five wrong confirmations lock this session\u2019s confirmations, not another session\u2019s', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    client.address = '198.51.100.7';
    for (let i = 0; i < 5; i++)
      assert.equal((await client.post('/profile/reauth', { secret: `guess-${i}-guess` })).status, 401);
    const locked = await client.post('/profile/reauth', { secret: TEST_PASSWORD });
    assert.equal(locked.status, 429);
    assert.match(locked.text, /Too many failed attempts/);
    // A new address does not help this session: the lock is on it.
    client.address = '198.51.100.8';
    assert.equal((await client.post('/profile/reauth', { secret: TEST_PASSWORD })).status, 429);
    const other = await signIn(t, account);
    assert.equal((await other.post('/profile/reauth', { secret: TEST_PASSWORD })).status, 303);
  });

  test('a reload shows the token no more, a replayed post mints nothing, and the token never appears again', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    await confirmItsMe(client, TEST_PASSWORD);
    const { post, page, once } = await submitMinting(client, '/profile', '/profile/tokens', { name: 'once' });
    const token = NEW_TOKEN.exec(page!.text)![1]!;
    assert.ok(!post.text.includes(token), 'the redirect carries no token');
    const reload = await client.get(REVEAL_PATH);
    assert.ok(!reload.text.includes(token));
    assert.match(reload.text, /This token was shown once and is not shown again/);
    const replay = await client.post('/profile/tokens', { name: 'once', _once: once });
    assert.equal(replay.location, REVEAL_PATH);
    assert.ok(!(await client.get(REVEAL_PATH)).text.includes(token));
    assert.equal(
      (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', account.id).execute()).length,
      1,
    );
    for (const path of ['/profile', '/', '/profile?reveal=token'])
      assert.ok(!(await client.get(path)).text.includes(token), path);
  });
});

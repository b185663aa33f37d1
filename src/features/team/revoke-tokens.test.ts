// Tokens in recovery: an administrator revokes every API token of an account (page, API; the CLI in
// src/cli/accounts.test.ts), the account page lists its tokens without ever showing one, a used reset link and "sign
// out everywhere" (when ticked) revoke them too, and a revoked token answers 401 at once on another instance.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ApiClient, assertProblem, buildApiUser } from '../../../test/helpers/api.ts';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { confirmInSettings } from '../../../test/helpers/once.ts';
import { startAsAdmin } from '../../../test/helpers/team-factories.ts';
import { openDatabase } from '../../db/connect.ts';
import { sha256 } from '../../deps.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { revokeAllTokens, suspendAccount, reactivateAccount } from './team.service.ts';

const TABLES = [
  'sessions',
  'recovery_codes',
  'api_tokens',
  'invitations',
  'password_resets',
  'auth_throttle',
  'accounts',
] as const;

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), TABLES));
  });

  const me = (token: string, app: TestApp = t) => new ApiClient(app, token).get('/api/me');
  const tokensOf = async (id: string) =>
    (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', id).execute()).length;
  const sessionsOf = async (id: string) =>
    (await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', id).execute()).length;

  test('the account page lists its tokens (name, created, last used, expiry), never a token or its hash', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const none = await admin.get(`/settings/accounts/${vera.id}`);
    assert.match(
      none.text,
      /<h3 id="account-tokens">API tokens<\/h3>\s*<p class="empty">This account has no API tokens\.<\/p>/,
    );
    assert.doesNotMatch(none.text, /Revoke all API tokens/, 'nothing to revoke, no button');

    const ci = await createToken(t.deps, vera.id, { name: 'ci deploys', expiry: 'never' });
    t.clock.advance(60_000);
    const ro = await createToken(t.deps, vera.id, { name: 'dashboard', expiry: '30', readOnly: true });
    t.clock.advance(60_000);
    assert.equal((await me(ci.token)).status, 200, 'used once: its last use is recorded');
    const page = await admin.get(`/settings/accounts/${vera.id}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<p>2 tokens:<\/p>/);
    const rows = [...page.text.matchAll(/<tr><td><span class="cell-label">Name: <\/span>([\s\S]*?)<\/tr>/g)].map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    assert.equal(rows.length, 2, page.text);
    assert.match(rows[0]!, /^dashboard read-only Created: .* Last used: never Expires: /);
    assert.match(rows[1]!, /^ci deploys Created: .* Last used: .*2026.* Expires: never$/);
    assert.match(page.text, /Last used: <\/span><time datetime="2026-01-15T12:02:00\.000Z"/, 'when it was last used');
    for (const secret of [ci.token, ro.token, sha256(ci.token), sha256(ro.token)])
      assert.ok(!page.text.includes(secret), 'no token or hash on the page');
    assert.match(
      page.text,
      new RegExp(
        `<a class="button danger" href="/settings/accounts/${vera.id}\\?confirm=revoke-tokens">Revoke all API tokens…</a>`,
      ),
    );

    // On one's own page the tokens are listed, but revoked from the Profile: no act here.
    await createToken(t.deps, adminId, { name: 'mine', expiry: 'never' });
    const own = await admin.get(`/settings/accounts/${adminId}`);
    assert.match(own.text, /1 token \(yours: revoke them on your Profile\):/);
    assert.doesNotMatch(own.text, /Revoke all API tokens/);
  });

  test('"Revoke all API tokens" asks first, then every token answers 401 and reactivation does not bring them back', async () => {
    const vera = await buildAccount(t, { username: 'vera', role: 'admin' });
    const a = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    const b = await createToken(t.deps, vera.id, { name: 'backup', expiry: '90' });
    const other = await buildAccount(t, { username: 'otto' });
    const kept = await createToken(t.deps, other.id, { name: 'kept', expiry: 'never' });
    assert.equal((await me(a.token)).status, 200);

    const step = await admin.get(`/settings/accounts/${vera.id}?confirm=revoke-tokens`);
    assert.equal(step.status, 200);
    assert.match(step.text, /<h3 id="confirm-title">Revoke every API token of vera\?<\/h3>/);
    assert.match(step.text, /All 2 API tokens of vera stop working now and for good/);
    assert.match(step.text, /<form method="post" action="\/settings\/accounts\/revoke-tokens"/);
    assert.match(step.text, /<button type="submit" class="danger">Revoke all API tokens<\/button>/);
    assert.equal(await tokensOf(vera.id), 2, 'the step alone changes nothing');

    // Suspended meanwhile, to show reactivation does not undo the revocation.
    await suspendAccount(t.deps, { actorId: adminId, accountId: vera.id });
    const res = await admin.post('/settings/accounts/revoke-tokens', { account: vera.id });
    assert.equal(res.status, 303);
    assert.equal(res.location, `/settings/accounts/${vera.id}?notice=tokens-revoked`);
    assert.match(
      (await admin.get(res.location!)).text,
      /Every API token of this account is revoked: each answers 401 from now on\./,
    );
    await reactivateAccount(t.deps, { actorId: adminId, accountId: vera.id });
    assert.equal((await me(a.token)).status, 401);
    assert.equal((await me(b.token)).status, 401);
    assert.equal((await me(kept.token)).status, 200, 'another account’s token is untouched');
    assert.equal(await tokensOf(vera.id), 0);
    assert.ok(
      t.logs.some((l) => /"event":"api-tokens-revoked"/.test(l) && l.includes(vera.id) && /"revoked":2/.test(l)),
      'logged',
    );
    for (const line of t.logs)
      assert.ok(!line.includes(a.token) && !line.includes(sha256(a.token)), 'no token in the log');

    const again = await admin.post('/settings/accounts/revoke-tokens', { account: vera.id });
    assert.equal(again.location, `/settings/accounts/${vera.id}?notice=no-tokens`);

    // Never one's own through this act (the step is not offered either), and an unknown account is a 404.
    await createToken(t.deps, adminId, { name: 'mine', expiry: 'never' });
    const self = await admin.post('/settings/accounts/revoke-tokens', { account: adminId });
    assert.equal(self.status, 409);
    assert.match(self.text, /Revoke your own API tokens one by one in the API tokens section of your Profile\./);
    assert.equal(await tokensOf(adminId), 1);
    assert.doesNotMatch((await admin.get(`/settings/accounts/${adminId}?confirm=revoke-tokens`)).text, /confirm-title/);
    assert.equal((await admin.post('/settings/accounts/revoke-tokens', { account: 'A'.repeat(22) })).status, 404);
  });

  test('the domain refuses a non-admin actor itself (a viewer, a suspended admin); the host CLI (null) may', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    const viewer = await buildAccount(t, { username: 'victor' });
    assert.deepEqual(await revokeAllTokens(t.deps, { actorId: viewer.id, accountId: vera.id }), {
      ok: false,
      reason: 'not-admin',
    });
    const fallen = await buildAccount(t, { username: 'fallen', role: 'admin' });
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', fallen.id).execute();
    assert.deepEqual(await revokeAllTokens(t.deps, { actorId: fallen.id, accountId: vera.id }), {
      ok: false,
      reason: 'not-admin',
    });
    assert.deepEqual(await revokeAllTokens(t.deps, { actorId: 'A'.repeat(22), accountId: vera.id }), {
      ok: false,
      reason: 'not-admin',
    });
    assert.equal(await tokensOf(vera.id), 1, 'nothing revoked by a refused actor');
    assert.deepEqual(await revokeAllTokens(t.deps, { actorId: null, accountId: vera.id }), {
      ok: true,
      username: 'vera',
      revoked: 1,
    });
    // A viewer's browser never reaches the act (every /settings route is for administrators).
    const viewerClient = await signIn(t, viewer);
    const form = await viewerClient.post('/settings/accounts/revoke-tokens', { account: vera.id });
    assert.equal(form.status, 403);
  });

  test('"sign out everywhere" offers revoking the tokens as a labelled checkbox; unticked, they keep working', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    assert.doesNotMatch(
      (await admin.get(`/settings/accounts/${vera.id}?confirm=sign-out`)).text,
      /revoke_tokens/,
      'no tokens, no box',
    );
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    await signIn(t, vera);
    const step = await admin.get(`/settings/accounts/${vera.id}?confirm=sign-out`);
    assert.match(
      step.text,
      /<input id="account-sign-out-revoke_tokens" type="checkbox" name="revoke_tokens" value="on"/,
    );
    assert.match(
      step.text,
      /<label for="account-sign-out-revoke_tokens">Also revoke every API token of vera \(1 token\)<\/label>/,
    );

    const plain = await admin.post('/settings/accounts/sign-out', { account: vera.id });
    assert.equal(plain.location, `/settings/accounts/${vera.id}?notice=signed-out`);
    assert.equal((await me(token)).status, 200, 'unticked: tokens untouched');

    await signIn(t, vera);
    const ticked = await admin.post('/settings/accounts/sign-out', { account: vera.id, revoke_tokens: 'on' });
    assert.equal(ticked.location, `/settings/accounts/${vera.id}?notice=signed-out-revoked`);
    assert.match(
      (await admin.get(ticked.location!)).text,
      /every session of this account ended, and every API token of it is revoked/,
    );
    assert.equal(await sessionsOf(vera.id), 0);
    assert.equal((await me(token)).status, 401);
  });

  test('using a reset link revokes the account’s API tokens; the page that mints it and the page that uses it say so', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    let page = await admin.get(`/settings/accounts/${vera.id}`);
    if (page.text.includes('id="reset-link-confirm"')) {
      await confirmInSettings(admin, TEST_PASSWORD, vera.id);
      page = await admin.get(`/settings/accounts/${vera.id}`);
    }
    assert.match(page.text, /Using\s+it ends every session of vera and revokes all its API tokens/);
    const once = /name="_once" value="([^"]+)"/.exec(page.text)![1]!;
    const minted = await admin.post('/settings/accounts/reset-link', { account: vera.id, _once: once });
    const shown = await admin.get(minted.location!);
    assert.match(shown.text, /When it\s+is used, every session of vera ends and every API token of it is revoked/);
    const link = /id="reset-link">http:\/\/localhost(\/reset\?token=[A-Za-z0-9_-]{43})<\/code>/.exec(shown.text)![1]!;

    // Opening the link alone revokes nothing.
    const visitor = t.client();
    const form = await visitor.get(link);
    assert.match(form.text, /Every session of this account ends and every API token of it is revoked/);
    assert.equal((await me(token)).status, 200);
    const used = await visitor.post('/reset', {
      token: new URL(link, 'http://x').searchParams.get('token')!,
      password: 'a brand new passphrase',
    });
    assert.equal(used.status, 303);
    assert.equal((await me(token)).status, 401);
    assert.equal(await tokensOf(vera.id), 0);
  });

  test('the API act revokes every token of another account; own, unknown and non-admin are refused', async () => {
    const adminToken = (await createToken(t.deps, adminId, { name: 'ops', expiry: 'never' })).token;
    const api = new ApiClient(t, adminToken);
    const vera = await buildAccount(t, { username: 'vera' });
    const a = await createToken(t.deps, vera.id, { name: 'one', expiry: 'never' });
    await createToken(t.deps, vera.id, { name: 'two', expiry: 'never', readOnly: true });

    const res = await api.post(`/api/accounts/${vera.id}/revoke-tokens`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { tokens_revoked: 2 });
    assert.equal((await me(a.token)).status, 401);
    assert.deepEqual((await api.post(`/api/accounts/${vera.id}/revoke-tokens`)).body, { tokens_revoked: 0 });

    const own = await api.post(`/api/accounts/${adminId}/revoke-tokens`);
    assertProblem(own, 409, 'own-account');
    assert.match(
      own.body.detail,
      /^Revoke your own API tokens one by one in the API tokens section of your Profile\.$/,
      'the page’s words',
    );
    assert.equal((await me(adminToken)).status, 200, 'its own token still works');
    assertProblem(await api.post(`/api/accounts/${'A'.repeat(22)}/revoke-tokens`), 404, 'not-found');
    const viewer = await buildApiUser(t, 'viewer');
    const refused = await viewer.api.post(`/api/accounts/${vera.id}/revoke-tokens`);
    assert.equal(refused.status, 403);
    const readOnly = await buildApiUser(t, 'admin', { readOnly: true });
    await createToken(t.deps, vera.id, { name: 'three', expiry: 'never' });
    assert.equal(
      (await readOnly.api.post(`/api/accounts/${vera.id}/revoke-tokens`)).status,
      403,
      'a read-only token writes nothing',
    );
    assert.equal(await tokensOf(vera.id), 1);
  });

  test('a token revoked on one instance answers 401 at once on another instance over the same database', async () => {
    const second = await openDatabase(getDb().database, { create: false });
    try {
      const other = buildTestApp({ ...getDb(), db: second.db, dialect: second.dialect });
      const vera = await buildAccount(t, { username: 'vera' });
      const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
      assert.equal((await me(token, other)).status, 200, 'the other instance accepts it');
      assert.equal((await me(token, other)).status, 200, 'and again (anything it might remember is warm)');
      const res = await admin.post('/settings/accounts/revoke-tokens', { account: vera.id });
      assert.equal(res.status, 303);
      assert.equal((await me(token, other)).status, 401, 'refused by the other instance at once');
      assert.equal((await me(token)).status, 401);
    } finally {
      await second.db.destroy();
    }
  });
});

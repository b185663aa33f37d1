// The team's accounts over the JSON API — the list, one account, and every act of its console page, refused
// for the same reasons; each answer is also checked against the OpenAPI document (test/helpers/api.ts).
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ApiClient, assertProblem, buildApiUser, openApiDocument } from '../../../test/helpers/api.ts';
import type { TestApp, TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { confirmInSettings } from '../../../test/helpers/once.ts';
import { buildInvitation, buildPasskeys, passkeysOf, startAsAdmin } from '../../../test/helpers/team-factories.ts';
import { sha256 } from '../../deps.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { RESET_TTL_MS } from '../reset/reset.service.ts';

const TABLES = [
  'sessions',
  'recovery_codes',
  'api_tokens',
  'invitations',
  'channels',
  'sso_identities',
  'sso_providers',
  'password_resets',
  'auth_throttle',
  'passkeys',
  'accounts',
] as const;

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  let api: ApiClient;
  let adminToken: string;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), TABLES));
    adminToken = (await createToken(t.deps, adminId, { name: 'ops', expiry: 'never' })).token;
    api = new ApiClient(t, adminToken);
  });

  const row = (id: string) => t.deps.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  const sessionsOf = async (id: string) =>
    (await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', id).execute()).length;
  /** No answer may carry a credential or its hash: tokens, password hashes, TOTP secrets. */
  const assertNoSecrets = (text: string, ...secrets: string[]) => {
    for (const secret of [adminToken, sha256(adminToken), ...secrets])
      assert.ok(!text.includes(secret), `a secret leaked: ${text.slice(0, 300)}`);
    assert.doesNotMatch(text, /\$argon2|password_hash|totp_secret|token_hash/);
  };

  test('the list pages through every account oldest first, with filters; a cursor it did not hand out is a 422', async () => {
    t.clock.advance(1000);
    const vera = await buildAccount(t, { username: 'vera' });
    t.clock.advance(1000);
    const otto = await buildAccount(t, { username: 'otto', role: 'admin' });
    t.clock.advance(1000);
    const sam = await buildAccount(t, { username: 'sam' });
    await t.deps.db
      .updateTable('accounts')
      .set({ suspended_at: t.clock.now(), totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
      .where('id', '=', sam.id)
      .execute();

    const first = await api.get('/api/accounts?limit=2');
    assert.equal(first.status, 200);
    assert.deepEqual(
      first.body.items.map((a: { id: string }) => a.id),
      [adminId, vera.id],
    );
    assert.deepEqual(first.body.items[1], {
      id: vera.id,
      username: 'vera',
      role: 'viewer',
      state: 'active',
      suspended_at: null,
      second_factor_enabled: false,
      second_factors: [],
      created_at: '2026-01-15T12:00:01.000Z',
      last_sign_in_at: null,
    });
    assert.equal(typeof first.body.next_cursor, 'string');
    const second = await api.get(`/api/accounts?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(
      second.body.items.map((a: { username: string }) => a.username),
      ['otto', 'sam'],
    );
    assert.equal(second.body.next_cursor, null);
    assert.deepEqual(second.body.items[1].state, 'suspended');
    assert.equal(second.body.items[1].second_factor_enabled, true);
    assert.deepEqual(second.body.items[1].second_factors, ['totp']);
    assertNoSecrets(first.text + second.text, 'JBSWY3DPEHPK3PXP');

    const admins = await api.get('/api/accounts?role=admin');
    assert.deepEqual(
      admins.body.items.map((a: { id: string }) => a.id),
      [adminId, otto.id],
    );
    const suspended = await api.get('/api/accounts?state=suspended');
    assert.deepEqual(
      suspended.body.items.map((a: { id: string }) => a.id),
      [sam.id],
    );

    for (const cursor of [
      'nope',
      Buffer.from('["x"]').toString('base64url'),
      Buffer.from('[1,"bad id!"]').toString('base64url'),
    ]) {
      const bad = await api.get(`/api/accounts?cursor=${cursor}`);
      assertProblem(bad, 422, 'invalid');
      assert.deepEqual(
        bad.body.errors.map((e: { field: string }) => e.field),
        ['cursor'],
      );
    }
    for (const query of ['limit=0', 'limit=101', 'role=owner', 'state=gone']) {
      const bad = await api.get(`/api/accounts?${query}`);
      assertProblem(bad, 422, 'invalid');
      assert.equal(bad.body.errors[0].field, query.split('=')[0]);
    }
  });

  test('one account shows its page’s facts and never a secret; an unknown id is a 404', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    await signIn(t, vera);
    await signIn(t, vera);
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: '30' });
    await buildInvitation(t, vera.id);
    const now = t.clock.now();
    const provider = {
      id: 'p1',
      slug: 'corp',
      display_name: 'Corp',
      issuer: 'https://idp.example',
      client_id: 'svc',
      client_secret: 'hush-hush',
      enabled: 1,
    };
    await t.deps.db
      .insertInto('sso_providers')
      .values({ ...provider, created_at: now, updated_at: now, created_by: vera.id })
      .execute();
    await t.deps.db
      .insertInto('sso_identities')
      .values({
        id: 'i1',
        provider_id: 'p1',
        sub: 'sub-1',
        account_id: vera.id,
        label: 'vera@example.com',
        linked_at: now,
      })
      .execute();
    const res = await api.get(`/api/accounts/${vera.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.username, 'vera');
    assert.equal(res.body.sessions, 2);
    assert.equal(res.body.api_tokens, 1);
    assert.equal(res.body.linked_identities, 1);
    assert.equal(res.body.authored_records, 2);
    assert.equal(res.body.live_invitations, 1);
    assert.equal(res.body.reset_link_expires_at, null);
    assert.deepEqual([res.body.second_factor_enabled, res.body.second_factors], [false, []]);
    assertNoSecrets(res.text, token, sha256(token), 'hush-hush');

    // A passkey is a second factor: its kind is listed, never its credential id or public key.
    const keys = await buildPasskeys(t, vera.id, 2);
    const withKeys = await api.get(`/api/accounts/${vera.id}`);
    assert.deepEqual([withKeys.body.second_factor_enabled, withKeys.body.second_factors], [true, ['passkey']]);
    await t.deps.db.updateTable('accounts').set({ totp_enabled: 1 }).where('id', '=', vera.id).execute();
    const both = await api.get(`/api/accounts/${vera.id}`);
    assert.deepEqual(both.body.second_factors, ['totp', 'passkey']);
    const listed = await api.get('/api/accounts');
    assert.deepEqual(
      Object.fromEntries(
        listed.body.items.map((a: { id: string; second_factors: string[] }) => [a.id, a.second_factors]),
      ),
      { [adminId]: [], [vera.id]: ['totp', 'passkey'] },
    );
    for (const text of [withKeys.text, both.text, listed.text])
      assertNoSecrets(text, ...keys.flatMap((k) => [k.credential_id, k.public_key, k.id]));

    assertProblem(await api.get('/api/accounts/no-such-account'), 404, 'not-found');
    assertProblem(await api.get('/api/accounts/not%20an%20id'), 404, 'not-found');
  });

  test('a viewer’s token is refused every account read and act; a read-only token reads but is refused every act', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const { api: viewer } = await buildApiUser(t, 'viewer');
    assertProblem(await viewer.get('/api/accounts'), 403, 'admin-only');
    assertProblem(await viewer.get(`/api/accounts/${vera.id}`), 403, 'admin-only');
    assertProblem(await viewer.patch(`/api/accounts/${vera.id}`, { role: 'admin' }), 403, 'admin-only');
    assertProblem(await viewer.post(`/api/accounts/${vera.id}/suspend`), 403, 'admin-only');
    assertProblem(await viewer.delete(`/api/accounts/${vera.id}?confirm=vera`), 403, 'admin-only');

    const { api: readOnly } = await buildApiUser(t, 'admin', { readOnly: true });
    assert.equal((await readOnly.get('/api/accounts')).status, 200);
    assert.equal((await readOnly.get(`/api/accounts/${vera.id}`)).status, 200);
    const acts: [string, string, Record<string, unknown>?][] = [
      ['PATCH', '', { role: 'admin' }],
      ['POST', '/suspend'],
      ['POST', '/reactivate'],
      ['POST', '/sign-out-everywhere'],
      ['POST', '/reset-second-factor'],
      ['POST', '/reset-link'],
      ['POST', '/reassign', { to: adminId }],
      ['DELETE', '?confirm=vera'],
    ];
    for (const [method, suffix, body] of acts) {
      assertProblem(await readOnly.request(method, `/api/accounts/${vera.id}${suffix}`, body), 403, 'read-only-token');
    }
    const after = await row(vera.id);
    assert.equal(after?.role, 'viewer');
    assert.equal(after?.suspended_at, null);
    assert.equal((await t.deps.db.selectFrom('password_resets').select('account_id').execute()).length, 0);
  });

  test('role change: applies, says when nothing changed, refuses one’s own role (409 own-role) and bad input (422)', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const promoted = await api.patch(`/api/accounts/${vera.id}`, { role: 'admin' });
    assert.equal(promoted.status, 200);
    assert.equal(promoted.body.changed, true);
    assert.equal(promoted.body.account.role, 'admin');
    assert.equal((await row(vera.id))?.role, 'admin');
    const again = await api.patch(`/api/accounts/${vera.id}`, { role: 'admin' });
    assert.equal(again.body.changed, false);

    const own = await api.patch(`/api/accounts/${adminId}`, { role: 'viewer' });
    assertProblem(own, 409, 'own-role');
    assert.match(own.body.detail, /You cannot change your own role/);
    assert.equal((await row(adminId))?.role, 'admin');

    for (const [body, field] of [
      [{ role: 'owner' }, 'role'],
      [{}, 'role'],
      [{ role: 'viewer', username: 'x' }, ''],
    ] as const) {
      const bad = await api.patch(`/api/accounts/${vera.id}`, body);
      assertProblem(bad, 422, 'invalid');
      if (field) assert.equal(bad.body.errors[0].field, field);
    }
    assertProblem(
      await api.request('PATCH', `/api/accounts/${vera.id}`, undefined, {
        raw: 'role=viewer',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    assertProblem(await api.patch('/api/accounts/no-such-account', { role: 'viewer' }), 404, 'not-found');
    assert.equal((await row(vera.id))?.role, 'admin');
  });

  // Only a race reaches the last-admin refusal through the API (the actor is itself an active admin); which of the two
  // refusals the loser meets depends on timing, so the test holds the outcome, not the path.
  test('two admins demoting each other through the API: one succeeds, the other is refused (409 last-admin or the gate’s 403)', async () => {
    for (let round = 0; round < 5; round++) {
      const { account: a, api: apiA } = await buildApiUser(t, 'admin');
      const { account: b, api: apiB } = await buildApiUser(t, 'admin');
      await t.deps.db.updateTable('accounts').set({ role: 'viewer' }).where('id', 'not in', [a.id, b.id]).execute();
      const [first, second] = await Promise.all([
        apiA.patch(`/api/accounts/${b.id}`, { role: 'viewer' }),
        apiB.patch(`/api/accounts/${a.id}`, { role: 'viewer' }),
      ]);
      const statuses = [first.status, second.status].sort();
      assert.equal(statuses[0], 200, String(statuses));
      const lost = first.status === 200 ? second : first;
      if (lost.status === 409) {
        assertProblem(lost, 409, 'last-admin');
        assert.match(lost.body.detail, /That would leave no active administrator\. Promote another account first\./);
      } else assertProblem(lost, 403, 'admin-only');
      const admins = await t.deps.db.selectFrom('accounts').select('id').where('role', '=', 'admin').execute();
      assert.equal(admins.length, 1);
    }
  });

  test('suspend ends the account’s sessions and makes its token 401; reactivate restores it; each says when nothing changed', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const veraBrowser = await signIn(t, vera);
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    const veraApi = new ApiClient(t, token);
    assert.equal((await veraApi.get('/api/me')).status, 200);

    const suspended = await api.post(`/api/accounts/${vera.id}/suspend`);
    assert.equal(suspended.status, 200);
    assert.deepEqual(
      [suspended.body.changed, suspended.body.account.state, suspended.body.account.suspended_at],
      [true, 'suspended', '2026-01-15T12:00:00.000Z'],
    );
    assertProblem(await veraApi.get('/api/me'), 401, 'unauthorized');
    assert.equal(await sessionsOf(vera.id), 0);
    assert.equal((await veraBrowser.get('/')).location, '/login');
    assert.ok(t.logs.some((l) => l.includes('"event":"account-suspended"') && l.includes(`"actor":"${adminId}"`)));
    assert.equal((await api.post(`/api/accounts/${vera.id}/suspend`)).body.changed, false);
    // The console shows what the API did.
    assert.match(
      (await admin.get('/settings?tab=team')).text,
      new RegExp(
        `${vera.id}">vera</a></td>\\s*<td><span class="role role-viewer">viewer</span></td>\\s*<td><span class="badge state-suspended">suspended</span>`,
      ),
    );

    const reactivated = await api.post(`/api/accounts/${vera.id}/reactivate`);
    assert.deepEqual(
      [reactivated.status, reactivated.body.changed, reactivated.body.account.state],
      [200, true, 'active'],
    );
    assert.equal((await veraApi.get('/api/me')).status, 200);
    assert.equal((await api.post(`/api/accounts/${vera.id}/reactivate`)).body.changed, false);

    const own = await api.post(`/api/accounts/${adminId}/suspend`);
    assertProblem(own, 409, 'own-account');
    assert.equal((await row(adminId))?.suspended_at, null);
    assertProblem(await api.post('/api/accounts/no-such-account/suspend'), 404, 'not-found');
    assertProblem(await api.post('/api/accounts/no-such-account/reactivate'), 404, 'not-found');

    // And the API shows what the console did.
    assert.equal((await admin.post('/settings/accounts/suspend', { account: vera.id })).status, 303);
    assert.equal((await api.get(`/api/accounts/${vera.id}`)).body.state, 'suspended');
  });

  test('sign out everywhere ends every session but keeps the tokens; one’s own is refused', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    await signIn(t, vera);
    await signIn(t, vera);
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    const res = await api.post(`/api/accounts/${vera.id}/sign-out-everywhere`);
    assert.deepEqual([res.status, res.body], [200, { sessions_ended: 2, tokens_revoked: 0 }]);
    assert.equal(await sessionsOf(vera.id), 0);
    assert.equal((await new ApiClient(t, token).get('/api/me')).status, 200, 'its tokens still work');
    await signIn(t, vera);
    for (const body of [{}, { revoke_tokens: false }]) {
      const again = await api.post(`/api/accounts/${vera.id}/sign-out-everywhere`, body);
      assert.equal(again.status, 200, JSON.stringify(body));
      assert.equal(again.body.tokens_revoked, 0, JSON.stringify(body));
    }
    assert.equal(await sessionsOf(vera.id), 0);
    assert.equal((await new ApiClient(t, token).get('/api/me')).status, 200, 'its tokens still work, unless asked');
    assertProblem(await api.post(`/api/accounts/${adminId}/sign-out-everywhere`), 409, 'own-account');
    assert.equal(await sessionsOf(adminId), 1, 'the admin’s own session stays');
    assertProblem(await api.post('/api/accounts/no-such-account/sign-out-everywhere'), 404, 'not-found');
  });

  test('sign out everywhere with {"revoke_tokens": true} also revokes every API token of the account; a non-boolean is a 422 on the field', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    await signIn(t, vera);
    const tokens = [
      (await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' })).token,
      (await createToken(t.deps, vera.id, { name: 'backup', expiry: 'never', readOnly: true })).token,
    ];
    for (const token of tokens) assert.equal((await new ApiClient(t, token).get('/api/me')).status, 200);
    for (const revoke_tokens of ['yes', 1, null, 'true']) {
      const bad = await api.post(`/api/accounts/${vera.id}/sign-out-everywhere`, { revoke_tokens });
      assertProblem(bad, 422, 'invalid');
      assert.deepEqual(
        bad.body.errors.map((e: { field: string }) => e.field),
        ['revoke_tokens'],
        JSON.stringify(revoke_tokens),
      );
    }
    assert.equal(await sessionsOf(vera.id), 1, 'a refused request ended nothing');
    for (const token of tokens) assert.equal((await new ApiClient(t, token).get('/api/me')).status, 200);

    const res = await api.post(`/api/accounts/${vera.id}/sign-out-everywhere`, { revoke_tokens: true });
    assert.deepEqual([res.status, res.body], [200, { sessions_ended: 1, tokens_revoked: 2 }]);
    assert.equal(await sessionsOf(vera.id), 0);
    for (const token of tokens) assertProblem(await new ApiClient(t, token).get('/api/me'), 401);
    const none = await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', vera.id).execute();
    assert.deepEqual(none, []);
    assert.equal((await api.get('/api/me')).status, 200, 'the admin’s own token is untouched');
  });

  test('each act on an account that is gone answers 404 in the words its OpenAPI operation documents', async () => {
    const doc = await openApiDocument(t);
    const gone = 'AAAAAAAAAAAAAAAAAAAAAA';
    const reads: [string, string, Record<string, unknown>?][] = [['GET', '']];
    const acts: [string, string, Record<string, unknown>?][] = [
      ['PATCH', '', { role: 'admin' }],
      ['POST', '/suspend'],
      ['POST', '/reactivate'],
      ['POST', '/sign-out-everywhere'],
      ['POST', '/revoke-tokens'],
      ['POST', '/reset-second-factor'],
      ['POST', '/reset-link'],
      ['POST', '/reassign', { to: adminId }],
    ];
    for (const [method, suffix, body] of [...reads, ...acts]) {
      const res = await api.request(method, `/api/accounts/${gone}${suffix}`, body);
      assertProblem(res, 404, 'not-found');
      const documented = doc.paths[`/api/accounts/{id}${suffix}`][method.toLowerCase()].responses['404'].description;
      assert.equal(res.body.detail, documented, `${method} ${suffix}`);
    }
    for (const [method, suffix, body] of acts) {
      const res = await api.request(method, `/api/accounts/${gone}${suffix}`, body);
      assert.equal(res.body.detail, 'That account no longer exists.', `${method} ${suffix}: the catalogue's words`);
    }
  });

  test('reset second factor clears TOTP and every passkey and voids the recovery codes; one’s own is refused', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
      .where('id', '=', vera.id)
      .execute();
    await t.deps.db
      .insertInto('recovery_codes')
      .values({ id: 'rc1', account_id: vera.id, code_hash: sha256('code'), used_at: null, created_at: t.clock.now() })
      .execute();
    await buildPasskeys(t, vera.id, 2);
    await buildPasskeys(t, adminId, 1);
    assert.deepEqual((await api.get(`/api/accounts/${vera.id}`)).body.second_factors, ['totp', 'passkey']);
    const res = await api.post(`/api/accounts/${vera.id}/reset-second-factor`);
    assert.equal(res.status, 200);
    assert.equal(res.body.second_factor_enabled, false);
    assert.deepEqual(res.body.second_factors, []);
    assert.equal(await passkeysOf(t, vera.id), 0, 'every passkey of hers is gone');
    assert.equal(await passkeysOf(t, adminId), 1, 'another account’s stays');
    assert.ok(
      t.logs.some((l) => /"event":"second-factor-reset".*"cleared":\{"totp":true,"passkeys":2\}/.test(l)),
      'the log line says what went',
    );
    assertNoSecrets(res.text, 'JBSWY3DPEHPK3PXP');
    const after = await row(vera.id);
    assert.deepEqual([after?.totp_secret, after?.totp_enabled], [null, 0]);
    assert.equal(
      (await t.deps.db.selectFrom('recovery_codes').select('account_id').where('account_id', '=', vera.id).execute())
        .length,
      0,
    );
    assertProblem(await api.post(`/api/accounts/${adminId}/reset-second-factor`), 409, 'own-account');
    assert.equal(await passkeysOf(t, adminId), 1, 'refused: nothing went');
    assertProblem(await api.post('/api/accounts/no-such-account/reset-second-factor'), 404, 'not-found');
  });

  test('a reset link is in its 201 answer once, never in the logs nor a later read; a token needs no "Confirm it’s you"', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const res = await api.post(`/api/accounts/${vera.id}/reset-link`);
    assert.equal(res.status, 201);
    assert.match(res.body.reset_link, /^http:\/\/localhost\/reset\?token=[A-Za-z0-9_-]{43}$/);
    assert.equal(res.body.expires_at, new Date(t.clock.now() + RESET_TTL_MS).toISOString());
    assert.equal(res.body.account_suspended, false);
    const token = new URL(res.body.reset_link).searchParams.get('token')!;
    assert.ok(!t.logs.join('').includes(token), 'the link is never logged');
    assert.ok(
      t.logs.some((l) => l.includes('"event":"reset-link-created"')),
      'the event is',
    );
    const read = await api.get(`/api/accounts/${vera.id}`);
    assert.equal(read.body.reset_link_expires_at, res.body.expires_at);
    assert.ok(!read.text.includes(token) && !(await api.get('/api/accounts')).text.includes(token));
    const stored = await t.deps.db
      .selectFrom('password_resets')
      .select('token_hash')
      .where('account_id', '=', vera.id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.token_hash, sha256(token));
    // The link works, and the console's account page shows one unused link without showing it.
    assert.equal((await t.client().get(`/reset?token=${token}`)).status, 200);
    const page = await admin.get(`/settings/accounts/${vera.id}`);
    assert.match(page.text, /one unused link, valid until/);
    assert.ok(!page.text.includes(token));
    // A second link voids the first.
    assert.equal((await api.post(`/api/accounts/${vera.id}/reset-link`)).status, 201);
    assert.match((await t.client().get(`/reset?token=${token}`)).text, /not valid|invalid|no longer/i);

    assertProblem(await api.post(`/api/accounts/${adminId}/reset-link`), 409, 'own-account');
    assertProblem(await api.post('/api/accounts/no-such-account/reset-link'), 404, 'not-found');
  });

  test('removal needs the exact username (422 on confirm), refuses an author (409) until its records are reassigned', async () => {
    const vera = await buildAccount(t, { username: 'Vera' });
    const invitation = await buildInvitation(t, vera.id);
    for (const query of ['?confirm=vera', '?confirm=Vera%20', '?confirm=', '']) {
      const res = await api.delete(`/api/accounts/${vera.id}${query}`);
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: { in: string; field: string }) => `${e.in}:${e.field}`),
        ['query:confirm'],
      );
    }
    assert.ok(await row(vera.id), 'nothing was removed');

    const author = await api.delete(`/api/accounts/${vera.id}?confirm=Vera`);
    assertProblem(author, 409, 'has-authored-records');
    assert.match(
      author.body.detail,
      /^Vera authored records .*Reassign those records to another account, or keep the account and demote it to viewer/,
    );
    assert.ok(await row(vera.id));

    const otto = await buildAccount(t, { username: 'otto', role: 'admin' });
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', otto.id).execute();
    const reassignCases: [unknown, number, string][] = [
      [{ to: vera.id }, 422, 'to'],
      [{ to: 'no-such-account' }, 422, 'to'],
      [{ to: 'not an id' }, 422, 'to'],
      [{}, 422, 'to'],
    ];
    for (const [body, status, field] of reassignCases) {
      const res = await api.post(`/api/accounts/${vera.id}/reassign`, body as Record<string, unknown>);
      assertProblem(res, status, 'invalid');
      assert.equal(res.body.errors[0].field, field);
    }
    assertProblem(await api.post(`/api/accounts/${vera.id}/reassign`, { to: otto.id }), 409, 'heir-suspended');
    assertProblem(await api.post(`/api/accounts/no-such-account/reassign`, { to: adminId }), 404, 'not-found');

    const moved = await api.post(`/api/accounts/${vera.id}/reassign`, { to: adminId });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.moved, 1);
    assert.equal(moved.body.to.id, adminId);
    const inv = await t.deps.db
      .selectFrom('invitations')
      .select('created_by')
      .where('id', '=', invitation)
      .executeTakeFirstOrThrow();
    assert.equal(inv.created_by, adminId);
    assert.equal((await api.get(`/api/accounts/${vera.id}`)).body.authored_records, 0);

    const removed = await api.delete(`/api/accounts/${vera.id}?confirm=Vera`);
    assert.equal(removed.status, 204);
    assert.equal(await row(vera.id), undefined);
    assert.equal((await api.delete(`/api/accounts/${vera.id}?confirm=Vera`)).status, 204, 'idempotent');
    assertProblem(await api.get(`/api/accounts/${vera.id}`), 404, 'not-found');
    assert.doesNotMatch((await admin.get('/settings?tab=team')).text, />Vera</, 'gone from the console too');

    const own = await api.delete(
      `/api/accounts/${adminId}?confirm=${encodeURIComponent((await row(adminId))!.username)}`,
    );
    assertProblem(own, 409, 'own-account');
    assert.ok(await row(adminId));
  });

  test('an account the console changed reads the same through the API, and the other way round', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    await confirmInSettings(admin, TEST_PASSWORD, vera.id);
    assert.equal((await admin.post('/settings/accounts/role', { account: vera.id, role: 'admin' })).status, 303);
    assert.equal((await api.get(`/api/accounts/${vera.id}`)).body.role, 'admin');
    assert.equal((await api.patch(`/api/accounts/${vera.id}`, { role: 'viewer' })).status, 200);
    assert.match(
      (await admin.get(`/settings/accounts/${vera.id}`)).text,
      /<span class="role role-viewer">viewer<\/span>/,
    );
    // The account's page lists it; its removal through the console ends its API listing.
    assert.equal(
      (await admin.post('/settings/accounts/remove', { account: vera.id, confirm: 'vera' })).location,
      '/settings?tab=team&notice=removed',
    );
    assert.ok(!(await api.get('/api/accounts')).body.items.some((a: { id: string }) => a.id === vera.id));
  });
});

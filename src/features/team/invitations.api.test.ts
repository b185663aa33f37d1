// Invitations over the JSON API — the open ones, minting (the join link in that answer only), revoking — and
// "Confirm it's you" for acts that hand out lasting access: a writing token counts, a session still needs confirming.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ApiClient, assertProblem, buildApiUser } from '../../../test/helpers/api.ts';
import type { TestApp, TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { confirmInSettings, submitMinting } from '../../../test/helpers/once.ts';
import { startAsAdmin } from '../../../test/helpers/team-factories.ts';
import { sha256 } from '../../deps.ts';
import { mintResetLink } from '../reset/reset.service.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { INVITATION_TTL_MS, mintInvitation } from './invitations.service.ts';

const TABLES = [
  'sessions',
  'recovery_codes',
  'api_tokens',
  'invitations',
  'password_resets',
  'auth_throttle',
  'accounts',
] as const;
const JOIN_LINK = /^http:\/\/localhost\/invite\?token=([A-Za-z0-9_-]{43})$/;

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  let api: ApiClient;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), TABLES));
    api = new ApiClient(t, (await createToken(t.deps, adminId, { name: 'ops', expiry: 'never' })).token);
  });

  const rows = () => t.deps.db.selectFrom('invitations').selectAll().orderBy('created_at').execute();
  const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id);

  test('minting answers 201 with the join link once, authored by the token’s account; the list never shows it again', async () => {
    const res = await api.post('/api/invitations', { role: 'viewer', note: '  for Dana, on-call  ' });
    assert.equal(res.status, 201);
    const token = JOIN_LINK.exec(res.body.join_link)?.[1];
    assert.ok(token, res.body.join_link);
    assert.deepEqual(
      { ...res.body, id: undefined, join_link: undefined },
      {
        id: undefined,
        join_link: undefined,
        role: 'viewer',
        note: 'for Dana, on-call',
        created_at: '2026-01-15T12:00:00.000Z',
        expires_at: new Date(t.clock.now() + INVITATION_TTL_MS).toISOString(),
      },
    );
    const [row] = await rows();
    assert.deepEqual(
      [row!.id, row!.created_by, row!.token_hash, row!.note],
      [res.body.id, adminId, sha256(token), 'for Dana, on-call'],
    );
    // The join link is written to the log, once (for operators without the page at hand); the hash never is.
    assert.equal(t.logs.filter((l) => l.includes(res.body.join_link)).length, 1);
    assert.ok(!t.logs.join('').includes(row!.token_hash));

    const list = await api.get('/api/invitations');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.items, [
      {
        id: res.body.id,
        role: 'viewer',
        note: 'for Dana, on-call',
        state: 'pending',
        created_at: '2026-01-15T12:00:00.000Z',
        expires_at: res.body.expires_at,
        created_by: {
          id: adminId,
          username: (
            await t.deps.db
              .selectFrom('accounts')
              .select('username')
              .where('id', '=', adminId)
              .executeTakeFirstOrThrow()
          ).username,
        },
      },
    ]);
    assert.ok(!list.text.includes(token) && !list.text.includes(row!.token_hash));
    // The link works: the invitee sees the acceptance form.
    assert.equal((await t.client().get(`/invite?token=${token}`)).status, 200);
  });

  test('an admin invitation through a writing token needs no "Confirm it’s you"; a read-only token is refused before the route', async () => {
    const res = await api.post('/api/invitations', { role: 'admin' });
    assert.equal(res.status, 201);
    assert.equal(res.body.note, null);
    assert.equal(res.body.role, 'admin');
    assert.equal((await rows())[0]?.role, 'admin');

    const { api: readOnly } = await buildApiUser(t, 'admin', { readOnly: true });
    assert.equal((await readOnly.get('/api/invitations')).status, 200, 'it may read');
    assertProblem(await readOnly.post('/api/invitations', { role: 'viewer' }), 403, 'read-only-token');
    assertProblem(await readOnly.delete(`/api/invitations/${res.body.id}`), 403, 'read-only-token');
    assert.equal((await rows()).length, 1);
    assert.equal((await rows())[0]?.revoked_at, null);
  });

  test('a viewer’s token is refused listing, minting and revoking', async () => {
    const minted = await api.post('/api/invitations', { role: 'viewer' });
    const { api: viewer } = await buildApiUser(t, 'viewer');
    assertProblem(await viewer.get('/api/invitations'), 403, 'admin-only');
    assertProblem(await viewer.post('/api/invitations', { role: 'viewer' }), 403, 'admin-only');
    assertProblem(await viewer.delete(`/api/invitations/${minted.body.id}`), 403, 'admin-only');
    assert.equal((await rows()).length, 1);
    assert.equal((await rows())[0]?.revoked_at, null);
  });

  test('bad input is a 422 naming the field, with the console’s own messages for the note; nothing is minted', async () => {
    const cases: [Record<string, unknown>, string, RegExp?][] = [
      [{ role: 'owner' }, 'role'],
      [{}, 'role'],
      [{ role: 'viewer', note: 'x'.repeat(201) }, 'note', /A note is at most 200 characters\./],
      [{ role: 'viewer', note: 'tab\u0007bell' }, 'note', /A note cannot contain control or invisible characters\./],
      [{ role: 'viewer', note: 5 }, 'note'],
      [{ role: 'viewer', token: 'pick-my-own' }, ''],
    ];
    for (const [body, field, message] of cases) {
      const res = await api.post('/api/invitations', body);
      assertProblem(res, 422, 'invalid');
      if (field) assert.equal(res.body.errors[0].field, field, JSON.stringify(body));
      if (message) assert.match(res.body.errors[0].detail, message);
    }
    assertProblem(
      await api.request('POST', '/api/invitations', undefined, {
        raw: 'role=viewer',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    assertProblem(
      await api.request('POST', '/api/invitations', undefined, {
        raw: '{"role":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
    );
    assert.equal((await rows()).length, 0);
    assert.ok(!t.logs.some((l) => l.includes('invitation-created')));
  });

  test('the list pages newest first and filters by state; a cursor it did not hand out is a 422', async () => {
    const minted: string[] = [];
    for (let i = 0; i < 3; i++) {
      minted.push((await api.post('/api/invitations', { role: 'viewer', note: `n${i}` })).body.id);
      t.clock.advance(24 * 60 * 60 * 1000);
    }
    const first = await api.get('/api/invitations?limit=2');
    assert.deepEqual(ids(first), [minted[2], minted[1]]);
    const second = await api.get(`/api/invitations?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(ids(second), [minted[0]]);
    assert.equal(second.body.next_cursor, null);

    // Seven days after the first was minted it has expired; the others are pending.
    t.clock.advance(4 * 24 * 60 * 60 * 1000);
    assert.deepEqual(ids(await api.get('/api/invitations?state=expired')), [minted[0]]);
    assert.deepEqual(ids(await api.get('/api/invitations?state=pending')), [minted[2], minted[1]]);
    assert.equal((await api.get('/api/invitations')).body.items[2].state, 'expired');

    const bad = await api.get('/api/invitations?cursor=not-a-cursor');
    assertProblem(bad, 422, 'invalid');
    assert.equal(bad.body.errors[0].field, 'cursor');
    assertProblem(await api.get('/api/invitations?state=spent'), 422, 'invalid');
  });

  test('revoking: 204 and the link stops working; again, or an unknown id, 204; an accepted one 409 invitation-spent', async () => {
    const minted = await api.post('/api/invitations', { role: 'viewer' });
    const token = JOIN_LINK.exec(minted.body.join_link)![1]!;
    assert.equal((await api.delete(`/api/invitations/${minted.body.id}`)).status, 204);
    assert.notEqual((await rows())[0]?.revoked_at, null);
    assert.notEqual((await t.client().get(`/invite?token=${token}`)).status, 200, 'the link no longer works');
    assert.deepEqual((await api.get('/api/invitations')).body.items, []);
    assert.equal((await api.delete(`/api/invitations/${minted.body.id}`)).status, 204, 'idempotent');
    assert.equal((await api.delete('/api/invitations/no-such-invitation')).status, 204);
    assert.equal((await api.delete('/api/invitations/not%20an%20id')).status, 204);

    const accepted = await api.post('/api/invitations', { role: 'viewer' });
    const acceptedToken = JOIN_LINK.exec(accepted.body.join_link)![1]!;
    const invitee = t.client();
    await invitee.get(`/invite?token=${acceptedToken}`);
    assert.equal(
      (await invitee.post('/invite', { token: acceptedToken, username: 'dana', password: 'a long enough password' }))
        .status,
      303,
    );
    const spent = await api.delete(`/api/invitations/${accepted.body.id}`);
    assertProblem(spent, 409, 'invitation-spent');
    assert.match(spent.body.detail, /already accepted/);
    const row = await t.deps.db
      .selectFrom('invitations')
      .select(['spent_at', 'revoked_at'])
      .where('id', '=', accepted.body.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.spent_at !== null, row.revoked_at], [true, null]);
  });

  test('an invitation minted through the API is on the console’s team tab, and one minted there is in the API list', async () => {
    const viaApi = await api.post('/api/invitations', { role: 'viewer', note: 'made over the API' });
    const tab = await admin.get('/settings?tab=team');
    assert.match(
      tab.text,
      /<td><span class="cell-label">Note: <\/span>made over the API<\/td>\s*<td><span class="cell-label">Created by: <\/span>[^<]+<\/td>/,
    );
    assert.ok(tab.text.includes(`name="invitation" value="${viaApi.body.id}"`));
    assert.ok(!tab.text.includes(viaApi.body.join_link), 'the console does not show the API’s link');

    const { post } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', {
      role: 'viewer',
      note: 'made on the page',
    });
    assert.equal(post.status, 303);
    const list = await api.get('/api/invitations');
    const fromPage = list.body.items.find((i: { note: string }) => i.note === 'made on the page');
    assert.ok(fromPage);
    assert.equal(fromPage.created_by.id, adminId);

    // Revoked on the page, gone from the API list.
    assert.equal(
      (await admin.post('/settings/accounts/invitations/revoke', { invitation: viaApi.body.id })).location,
      '/settings?tab=team&notice=revoked',
    );
    assert.ok(!ids(await api.get('/api/invitations')).includes(viaApi.body.id));
  });

  test('"Confirm it’s you": a writing token of the actor counts; a session still needs its confirmation; the command line needs none', async () => {
    const base = 'http://localhost';
    const vera = await buildAccount(t, { username: 'vera' });
    const tokenOf = async (accountId: string, options: { readOnly?: boolean; expiry?: string } = {}) =>
      (
        await createToken(t.deps, accountId, {
          name: 'x',
          expiry: options.expiry ?? 'never',
          readOnly: options.readOnly,
        })
      ).id;
    const refused = { ok: false, reason: 'reauth-required' };
    // A session without a recent confirmation is still refused, and no credential at all too, although this admin holds
    // a writing token (made in beforeEach): the credential is named explicitly, never inferred from what exists.
    await admin.get('/settings?tab=team');
    const session = (
      await t.deps.db
        .selectFrom('sessions')
        .select('id_hash')
        .where('account_id', '=', adminId)
        .executeTakeFirstOrThrow()
    ).id_hash;
    assert.deepEqual(
      await mintInvitation(t.deps, { actorId: adminId, sessionIdHash: session, role: 'admin', base }),
      refused,
    );
    assert.deepEqual(await mintInvitation(t.deps, { actorId: adminId, role: 'admin', base }), refused);
    assert.deepEqual(
      await mintResetLink(t.deps, { actorId: adminId, sessionIdHash: session, accountId: vera.id, base }),
      refused,
    );
    const { post } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', { role: 'admin' });
    assert.equal(post.status, 403, 'the page still asks for the confirmation');
    await confirmInSettings(admin, TEST_PASSWORD);
    assert.equal(
      (await mintInvitation(t.deps, { actorId: adminId, sessionIdHash: session, role: 'admin', base })).ok,
      true,
    );
    const own = await tokenOf(adminId);
    assert.equal(
      (await mintInvitation(t.deps, { actorId: adminId, via: 'token', tokenId: own, role: 'admin', base })).ok,
      true,
    );
    assert.equal(
      (await mintResetLink(t.deps, { actorId: adminId, via: 'token', tokenId: own, accountId: vera.id, base })).ok,
      true,
    );

    // Not a read-only token, not another account's, not an expired one, not one of a suspended account.
    const readOnly = await tokenOf(adminId, { readOnly: true });
    const foreign = await tokenOf(vera.id);
    const short = await tokenOf(adminId, { expiry: '30' });
    for (const tokenId of [readOnly, foreign, 'no-such-token']) {
      assert.deepEqual(
        await mintInvitation(t.deps, { actorId: adminId, via: 'token', tokenId, role: 'admin', base }),
        refused,
        tokenId,
      );
      assert.deepEqual(
        await mintResetLink(t.deps, { actorId: adminId, via: 'token', tokenId, accountId: vera.id, base }),
        refused,
        tokenId,
      );
    }
    assert.equal(
      (await mintInvitation(t.deps, { actorId: adminId, via: 'token', tokenId: short, role: 'admin', base })).ok,
      true,
    );
    t.clock.advance(31 * 24 * 60 * 60 * 1000);
    assert.deepEqual(
      await mintInvitation(t.deps, { actorId: adminId, via: 'token', tokenId: short, role: 'admin', base }),
      refused,
      'expired',
    );
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', adminId).execute();
    assert.deepEqual(
      await mintInvitation(t.deps, { actorId: adminId, via: 'token', tokenId: own, role: 'admin', base }),
      refused,
      'suspended',
    );
    await t.deps.db.updateTable('accounts').set({ suspended_at: null }).where('id', '=', adminId).execute();

    assert.equal((await mintInvitation(t.deps, { actorId: null, role: 'admin', base })).ok, true);
  });
});

// One wording per refusal: each act's catalogue (the *.refusals.ts files beside the services) holds the words, and
// every door shows exactly those words for the same reason: the page (heading it or beside the field), the JSON API
// (`detail` of the problem, or of the field's error) and `svc accounts` where the act has a command.
import assert from 'node:assert/strict';
import { before, beforeEach, test } from 'node:test';
import { build } from '../scripts/build.mjs';
import { ApiClient, type ApiResponse } from './helpers/api.ts';
import type { TestApp, TestClient, TestResponse } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { buildAccount } from './helpers/factories.ts';
import { databaseUrlOf, svc } from './helpers/svc.ts';
import { buildInvitation, startAsAdmin } from './helpers/team-factories.ts';
import { CHANNEL_FIELD_REFUSALS, CHANNEL_URL_REFUSALS } from '../src/features/channels/channels.refusals.ts';
import { validateChannelUrl } from '../src/features/channels/channel-url.ts';
import { wordsOf, type Refusal } from '../src/features/refusals.ts';
import { classifyAddress } from '../src/net/address-policy.ts';
import { ISSUER_REFUSALS, PROVIDER_REFUSALS } from '../src/features/sso/sso.refusals.ts';
import {
  REMOVE_REFUSALS,
  REVOKE_INVITATION_REFUSALS,
  ROLE_REFUSALS,
  SIGN_OUT_REFUSALS,
  SUSPEND_REFUSALS,
} from '../src/features/team/team.refusals.ts';
import { createToken } from '../src/features/tokens/tokens.service.ts';

before(() => build());

/** Text as the page's HTML carries it. */
const html = (words: string) =>
  words
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** The words of a refusal that names nothing of its case. */
const plain = (refusal: Refusal<never>) => {
  assert.equal(typeof refusal.words, 'string', 'a refusal without facts has fixed words');
  return refusal.words as string;
};

const TABLES = [
  'sessions',
  'recovery_codes',
  'api_tokens',
  'invitations',
  'deliveries',
  'channels',
  'sso_identities',
  'sso_providers',
  'password_resets',
  'auth_throttle',
  'accounts',
] as const;

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  let adminName: string;
  let api: ApiClient;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), TABLES));
    adminName = (
      await t.deps.db.selectFrom('accounts').select('username').where('id', '=', adminId).executeTakeFirstOrThrow()
    ).username;
    api = new ApiClient(t, (await createToken(t.deps, adminId, { name: 'ops', expiry: 'never' })).token);
  });

  /** The page shows `words`, with the status of its catalogue entry. */
  const onPage = (res: TestResponse, refusal: Refusal<never>, words: string) => {
    assert.equal(res.status, refusal.status, res.text.slice(0, 200));
    assert.ok(res.text.includes(html(words)), `the page says: ${words}`);
  };
  /** The API's problem has `words` as its detail, with the catalogue's status and type. */
  const asProblem = (res: ApiResponse, refusal: Refusal<never>, words: string) => {
    assert.equal(res.status, refusal.status, res.text);
    assert.equal(res.body.type, `urn:svc:problem:${refusal.type}`);
    assert.equal(res.body.detail, words);
  };
  /** The API names `field` with `words` in its errors. */
  const onField = (res: ApiResponse, field: string, words: string) => {
    const error = (res.body.errors ?? []).find((e: { field: string }) => e.field === field);
    assert.equal(error?.detail, words, `the API's ${field} error: ${res.text}`);
  };

  test('own role, own removal, signing oneself out everywhere: the account page and the API say the same words', async () => {
    const own = plain(ROLE_REFUSALS.self);
    onPage(await admin.post('/settings/accounts/role', { account: adminId, role: 'viewer' }), ROLE_REFUSALS.self, own);
    asProblem(await api.patch(`/api/accounts/${adminId}`, { role: 'viewer' }), ROLE_REFUSALS.self, own);

    const removal = plain(REMOVE_REFUSALS.self);
    onPage(
      await admin.post('/settings/accounts/remove', { account: adminId, confirm: adminName }),
      REMOVE_REFUSALS.self,
      removal,
    );
    asProblem(
      await api.delete(`/api/accounts/${adminId}?confirm=${encodeURIComponent(adminName)}`),
      REMOVE_REFUSALS.self,
      removal,
    );

    const signOut = plain(SIGN_OUT_REFUSALS.self);
    onPage(await admin.post('/settings/accounts/sign-out', { account: adminId }), SIGN_OUT_REFUSALS.self, signOut);
    asProblem(await api.post(`/api/accounts/${adminId}/sign-out-everywhere`), SIGN_OUT_REFUSALS.self, signOut);
    assert.ok(
      (await t.deps.db.selectFrom('accounts').select('id').where('id', '=', adminId).executeTakeFirst()) !== undefined,
    );
  });

  test('a remove confirmation that is not the exact username: beside the field on the page, on `confirm` in the API', async () => {
    const vera = await buildAccount(t, { username: 'Vera' });
    const words = plain(REMOVE_REFUSALS.confirmation);
    const page = await admin.post('/settings/accounts/remove', { account: vera.id, confirm: 'vera ' });
    onPage(page, REMOVE_REFUSALS.confirmation, words);
    const res = await api.delete(`/api/accounts/${vera.id}?confirm=vera`);
    assert.equal(res.status, 422);
    onField(res, 'confirm', words);
    assert.ok(
      await t.deps.db.selectFrom('accounts').select('id').where('id', '=', vera.id).executeTakeFirst(),
      'nothing was removed',
    );
  });

  test('the last active administrator: svc accounts says the catalogue’s words for set-role and suspend', async () => {
    const env = { DATABASE_URL: databaseUrlOf(getDb()) };
    const demote = await svc(['accounts', 'set-role', adminName, 'viewer'], env);
    assert.equal(demote.code, 1, demote.stderr);
    assert.ok(
      demote.stderr.includes(`${adminName}: ${plain(ROLE_REFUSALS['last-admin'])} Nothing changed.`),
      demote.stderr,
    );
    const suspend = await svc(['accounts', 'suspend', adminName], env);
    assert.equal(suspend.code, 1, suspend.stderr);
    assert.ok(
      suspend.stderr.includes(`${adminName}: ${plain(SUSPEND_REFUSALS['last-admin'])} Nothing changed.`),
      suspend.stderr,
    );
    const row = await t.deps.db
      .selectFrom('accounts')
      .select(['role', 'suspended_at'])
      .where('id', '=', adminId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { role: 'admin', suspended_at: null });
  });

  test('revoking an invitation already accepted: the team tab and the API say the same words', async () => {
    const invitation = await buildInvitation(t, adminId);
    await t.deps.db.updateTable('invitations').set({ spent_at: t.clock.now() }).where('id', '=', invitation).execute();
    const words = plain(REVOKE_INVITATION_REFUSALS.spent);
    onPage(
      await admin.post('/settings/accounts/invitations/revoke', { invitation }),
      REVOKE_INVITATION_REFUSALS.spent,
      words,
    );
    asProblem(await api.delete(`/api/invitations/${invitation}`), REVOKE_INVITATION_REFUSALS.spent, words);
    const row = await t.deps.db
      .selectFrom('invitations')
      .select('revoked_at')
      .where('id', '=', invitation)
      .executeTakeFirstOrThrow();
    assert.equal(row.revoked_at, null);
  });

  test('a duplicate provider slug and a non-https issuer: the SSO tab and the API say the same words', async () => {
    const fields = { display_name: 'Corp', slug: 'corp', issuer: 'https://idp.example.com', client_id: 'svc' };
    assert.equal((await admin.post('/settings/sso', { ...fields, save_anyway: 'on' })).status, 303);
    const duplicate = plain(PROVIDER_REFUSALS['duplicate-slug']);
    onPage(
      await admin.post('/settings/sso', { ...fields, display_name: 'Other', save_anyway: 'on' }),
      PROVIDER_REFUSALS['duplicate-slug'],
      duplicate,
    );
    const res = await api.post('/api/sso/providers', { ...fields, display_name: 'Other', skip_discovery: true });
    asProblem(res, PROVIDER_REFUSALS['duplicate-slug'], duplicate);
    onField(res, 'slug', duplicate);

    const https = plain(ISSUER_REFUSALS['not-https']);
    const page = await admin.post('/settings/sso', {
      ...fields,
      slug: 'plain',
      issuer: 'http://idp.example.com',
      save_anyway: 'on',
    });
    assert.equal(page.status, 400);
    assert.ok(page.text.includes(html(https)), 'the page says the issuer must use https');
    const api422 = await api.post('/api/sso/providers', {
      ...fields,
      slug: 'plain',
      issuer: 'http://idp.example.com',
      skip_discovery: true,
    });
    assert.equal(api422.status, 422);
    onField(api422, 'issuer', https);
    assert.equal(
      (await t.deps.db.selectFrom('sso_providers').select('id').execute()).length,
      1,
      'only the first was saved',
    );
  });

  test('an internal channel URL and no class chosen: the channels tab and the API say the same words', async () => {
    const url = 'https://10.0.0.7/hook';
    const refused = validateChannelUrl(url);
    assert.ok(!refused.ok && refused.reason === 'internal-address', 'the domain refuses it as an internal address');
    const verdict = classifyAddress('10.0.0.7');
    assert.ok(!verdict.global);
    const internal = wordsOf(CHANNEL_URL_REFUSALS['internal-address'], {
      protocol: 'https:',
      host: '10.0.0.7',
      ip: '10.0.0.7',
      range: verdict.reason,
    });
    assert.equal(refused.words, internal);
    const noClass = plain(CHANNEL_FIELD_REFUSALS['no-class']);

    const page = await admin.post('/settings/channels', { url });
    assert.equal(page.status, 400);
    assert.ok(page.text.includes(html(internal)), 'the page names the internal address');
    assert.ok(page.text.includes(html(noClass)), 'the page asks for a class');
    const res = await api.post('/api/channels', { url, classes: [] });
    assert.equal(res.status, 422, res.text);
    onField(res, 'url', internal);
    onField(res, 'classes', noClass);
    assert.equal((await t.deps.db.selectFrom('channels').select('id').execute()).length, 0, 'no channel was made');
  });
});

// The single sign-on API: providers and linked identities over bearer tokens, with the console's rules (https issuer,
// slug, duplicate slug, discovery) and its secret handling (write-only; replace, clear, keep). Every answer is also
// checked against the OpenAPI document by the test client.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import {
  assertProblem,
  buildApiUser,
  openApiDocument,
  type ApiClient,
  type ApiResponse,
} from '../../../test/helpers/api.ts';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, signedInAs } from '../../../test/helpers/factories.ts';
import { confirmItsMe } from '../../../test/helpers/once.ts';
import { closedPort } from '../../../test/helpers/ports.ts';
import { clearSsoState, newSub, redirectUrisFor, roundTrip } from '../../../test/helpers/sso.ts';
import { makeCertificates, PUBLIC_CLIENT_ID, startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';

const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-api-ca-')));
let idp: TestIdp;
before(async () => {
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['corp']), certs });
});
after(async () => {
  await idp.close();
});

const SECRET = 'api-client-secret-value-5678';
const OTHER_SECRET = 'replacement-secret-value-9012';
/** Saved without the discovery check: idp.example.com does not exist (the checks have their own tests). */
const DECLARE = {
  display_name: 'Corp IdP',
  slug: 'corp',
  issuer: 'https://idp.example.com',
  client_id: 'svc',
  skip_discovery: true,
};

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof buildApiUser>>;
  /** Every answer any client got in this test, to check that no secret ever left. */
  let answers: ApiResponse[];

  /** A client whose answers are kept for the secrets check. */
  const recorded = (api: ApiClient): ApiClient =>
    new Proxy(api, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function' || prop !== 'request')
          return typeof value === 'function' ? value.bind(receiver) : value;
        return async (...args: Parameters<ApiClient['request']>) => {
          const res = await value.apply(target, args);
          answers.push(res);
          return res;
        };
      },
    });

  const user = async (role: 'admin' | 'viewer', options: { readOnly?: boolean } = {}) => {
    const u = await buildApiUser(t, role, options);
    return { ...u, api: recorded(u.api) };
  };

  beforeEach(async () => {
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb());
    answers = [];
    admin = await user('admin');
  });

  const row = (slug = 'corp') =>
    t.deps.db.selectFrom('sso_providers').selectAll().where('slug', '=', slug).executeTakeFirstOrThrow();
  const rows = () => t.deps.db.selectFrom('sso_providers').select('slug').orderBy('slug').execute();
  const declare = async (fields: Record<string, unknown> = {}) => {
    const res = await admin.api.post('/api/sso/providers', { ...DECLARE, ...fields });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const bind = (providerId: string, accountId: string, id: string, linkedAt = t.clock.now()) =>
    t.deps.db
      .insertInto('sso_identities')
      .values({
        id,
        provider_id: providerId,
        sub: `sub-${id}`,
        account_id: accountId,
        label: `${id}@corp.example`,
        linked_at: linkedAt,
      })
      .execute();
  /** No answer of the test carried a secret. */
  const noSecretsLeft = () => {
    for (const res of answers)
      for (const secret of [SECRET, OTHER_SECRET])
        assert.ok(!res.text.includes(secret), `a secret in ${res.text.slice(0, 200)}`);
    assert.ok(!t.logs.some((l) => l.includes(SECRET) || l.includes(OTHER_SECRET)), 'nor in a log line');
  };
  /** An admin's browser on the Settings tab. */
  const console_ = async (): Promise<TestClient> => {
    const { client } = await signedInAs(t, 'admin');
    await client.get('/settings?tab=sso');
    return client;
  };

  test('declaring a provider answers 201 with its address, authored by the token’s account; the secret is stored, never shown', async () => {
    const res = await admin.api.post('/api/sso/providers', { ...DECLARE, client_secret: SECRET });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('location'), `/api/sso/providers/${res.body.id}`);
    assert.deepEqual(
      { ...res.body, id: 'x', created_at: 'x', updated_at: 'x' },
      {
        id: 'x',
        display_name: 'Corp IdP',
        slug: 'corp',
        issuer: 'https://idp.example.com',
        client_id: 'svc',
        has_secret: true,
        enabled: true,
        client_auth_method: 'automatic',
        client_auth_learned: null,
        linked_identities: 0,
        callback_urls: {
          sign_in: 'http://localhost/login/sso/corp/callback',
          link: 'http://localhost/profile/sso/corp/link/callback',
        },
        sign_out_at_provider: false,
        logout_urls: {
          post_logout_redirect: 'http://localhost/login',
          backchannel: 'http://localhost/login/sso/corp/backchannel-logout',
        },
        created_at: 'x',
        updated_at: 'x',
        created_by: { id: admin.account.id, username: admin.account.username },
      },
    );
    assert.equal(res.body.created_at, new Date(t.clock.now()).toISOString());
    const stored = await row();
    assert.equal(stored.client_secret, SECRET);
    assert.equal(stored.created_by, admin.account.id);
    assert.equal(stored.enabled, 1);
    const one = await admin.api.get(res.headers.get('location')!);
    assert.deepEqual(one.body, res.body);
    assert.deepEqual((await admin.api.get('/api/sso/providers')).body, { items: [res.body] });
    const disabled = await declare({ slug: 'later', enabled: false });
    assert.equal(disabled.enabled, false);
    assert.equal(disabled.has_secret, false);
    noSecretsLeft();
  });

  test('a provider declared through the API shows on the console’s SSO tab, and one declared on the console shows in the API', async () => {
    await declare({ client_secret: SECRET });
    const c = await console_();
    const tab = await c.get('/settings?tab=sso');
    assert.match(tab.text, /Corp IdP/);
    assert.match(tab.text, /secret: set/);
    const made = await c.post('/settings/sso', {
      display_name: 'Made on the console',
      slug: 'console',
      issuer: 'https://login.example.org',
      client_id: 'c1',
      client_secret: OTHER_SECRET,
      save_anyway: 'on',
    });
    assert.equal(made.status, 303);
    const listed = (await admin.api.get('/api/sso/providers')).body.items;
    assert.deepEqual(
      listed.map((p: { slug: string }) => p.slug),
      ['corp', 'console'],
    );
    const fromConsole = listed[1];
    assert.equal(fromConsole.display_name, 'Made on the console');
    assert.equal(fromConsole.has_secret, true);
    assert.equal(fromConsole.created_by.id, (await row('console')).created_by);
    assert.notEqual(fromConsole.created_by.id, admin.account.id);
    noSecretsLeft();
  });

  test('the console’s field rules refuse bad input with 422 on the field, in the console’s words; nothing is stored', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ issuer: 'http://idp.example.com' }, 'issuer', /^The issuer URL must use https\.$/],
      [{ issuer: 'idp.example.com' }, 'issuer', /absolute URL/],
      [{ issuer: 'https://user:pw@idp.example.com' }, 'issuer', /cannot carry a user name/],
      [{ issuer: 'https://idp.example.com/.well-known/openid-configuration' }, 'issuer', /not its discovery document/],
      [{ slug: 'Corp' }, 'slug', /lowercase letters, digits and hyphens/],
      [{ slug: 'co--rp' }, 'slug', /lowercase letters, digits and hyphens/],
      [{ slug: '' }, 'slug', /Enter the slug/],
      [{ slug: 'x'.repeat(65) }, 'slug', /at most 64 characters/],
      [{ display_name: '   ' }, 'display_name', /Enter the display name/],
      [{ display_name: 'Corp\u202eIdP' }, 'display_name', /control or invisible characters/],
      [{ client_id: undefined }, 'client_id', /Enter the client ID/],
      [{ client_id: 42 }, 'client_id', /Enter the client ID/],
      [{ client_secret: '' }, 'client_secret', /leave the field out for a public client/],
      [{ client_secret: 'a\u0000b' }, 'client_secret', /control characters/],
      [{ client_secret: 'x'.repeat(1025) }, 'client_secret', /at most 1024 characters/],
      [{ enabled: 'yes' }, 'enabled', /./],
    ];
    for (const [fields, field, message] of cases) {
      const res = await admin.api.post('/api/sso/providers', { ...DECLARE, ...fields });
      assertProblem(res, 422, 'invalid');
      const entry = res.body.errors.find((e: { field: string }) => e.field === field);
      assert.ok(entry, `${JSON.stringify(fields).slice(0, 80)}: ${res.text}`);
      assert.match(entry.detail, message, JSON.stringify(fields).slice(0, 80));
      assert.equal(entry.in, 'body');
    }
    assertProblem(
      await admin.api.post('/api/sso/providers', { ...DECLARE, client_secret: SECRET, secret: SECRET }),
      422,
      'invalid',
    );
    assert.deepEqual(await rows(), []);
    const edge = await declare({ slug: 'a1-b2-c3', display_name: '  Trimmed  ' });
    assert.equal(edge.display_name, 'Trimmed');
    noSecretsLeft();
  });

  test('a duplicate slug is a 409 duplicate-slug in plain words, on declare and on change', async () => {
    await declare();
    const other = await declare({ slug: 'other', display_name: 'Other' });
    const dup = await admin.api.post('/api/sso/providers', { ...DECLARE, display_name: 'Again' });
    assertProblem(dup, 409, 'duplicate-slug');
    assert.equal(dup.body.detail, 'Another provider already uses this slug. Choose a different one.');
    assert.deepEqual(dup.body.errors, [{ in: 'body', field: 'slug', detail: dup.body.detail }]);
    assert.doesNotMatch(dup.text, /constraint|UNIQUE|duplicate key/i);
    const change = await admin.api.patch(`/api/sso/providers/${other.id}`, { slug: 'corp', display_name: 'Renamed' });
    assertProblem(change, 409, 'duplicate-slug');
    assert.equal((await row('other')).display_name, 'Other', 'nothing of the refused change was saved');
  });

  test('PATCH changes only the fields sent; the secret is replaced by a string, cleared by null, kept when absent', async () => {
    const created = await declare({ client_secret: SECRET });
    const url = `/api/sso/providers/${created.id}`;
    t.clock.advance(60_000);
    const renamed = await admin.api.patch(url, { display_name: 'Corporate' });
    assert.equal(renamed.status, 200);
    assert.deepEqual({ ...renamed.body, updated_at: created.updated_at }, { ...created, display_name: 'Corporate' });
    assert.equal(renamed.body.updated_at, new Date(t.clock.now()).toISOString());
    assert.equal((await row()).client_secret, SECRET, 'absent keeps');

    const replaced = await admin.api.patch(url, { client_secret: OTHER_SECRET });
    assert.equal(replaced.body.has_secret, true);
    assert.equal((await row()).client_secret, OTHER_SECRET, 'a string replaces');
    const kept = await admin.api.patch(url, { enabled: false });
    assert.equal(kept.body.enabled, false);
    assert.equal((await row()).client_secret, OTHER_SECRET, 'absent keeps');
    const cleared = await admin.api.patch(url, { client_secret: null });
    assert.equal(cleared.body.has_secret, false);
    assert.equal((await row()).client_secret, null, 'null clears');
    assertProblem(await admin.api.patch(url, { client_secret: '' }), 422, 'invalid');
    assert.equal((await row()).client_secret, null);

    const moved = await admin.api.patch(url, {
      slug: 'corp-2',
      issuer: 'https://login.example.com/realm',
      client_id: 'svc-2',
      enabled: true,
      skip_discovery: true,
    });
    assert.equal(moved.status, 200);
    assert.deepEqual(
      [moved.body.slug, moved.body.issuer, moved.body.client_id, moved.body.enabled],
      ['corp-2', 'https://login.example.com/realm', 'svc-2', true],
    );
    assert.equal(moved.body.callback_urls.sign_in, 'http://localhost/login/sso/corp-2/callback');
    assertProblem(await admin.api.patch(url, { issuer: 'http://login.example.com' }), 422, 'invalid');
    assertProblem(await admin.api.patch(url, { display_name: null }), 422, 'invalid');
    assert.equal((await row('corp-2')).issuer, 'https://login.example.com/realm');
    noSecretsLeft();
  });

  test('a new issuer removes the identities linked through the provider, as the console warns; the accounts stay', async () => {
    const created = await declare();
    const carol = await buildAccount(t, { username: 'carol' });
    await bind(created.id, carol.id, 'b1');
    assert.equal((await admin.api.get(`/api/sso/providers/${created.id}`)).body.linked_identities, 1);
    const same = await admin.api.patch(`/api/sso/providers/${created.id}`, {
      issuer: DECLARE.issuer,
      skip_discovery: true,
    });
    assert.equal(same.body.linked_identities, 1, 'the same issuer keeps them');
    const moved = await admin.api.patch(`/api/sso/providers/${created.id}`, {
      issuer: 'https://elsewhere.example.com',
      skip_discovery: true,
    });
    assert.equal(moved.body.linked_identities, 0);
    assert.deepEqual((await admin.api.get('/api/sso/identities')).body.items, []);
    assert.ok(await t.deps.db.selectFrom('accounts').select('id').where('id', '=', carol.id).executeTakeFirst());
  });

  test('an unknown or malformed provider id is a 404 on read and change', async () => {
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', 'not%20an%20id', 'x'.repeat(65)]) {
      assertProblem(await admin.api.get(`/api/sso/providers/${id}`), 404, 'not-found');
      assertProblem(await admin.api.patch(`/api/sso/providers/${id}`, { display_name: 'X' }), 404, 'not-found');
    }
    assertProblem(
      await admin.api.patch('/api/sso/providers/AAAAAAAAAAAAAAAAAAAAAA', { enabled: true }),
      404,
      'not-found',
    );
    // A well-formed id of no provider is answered in the words the document gives the operation's 404.
    const operation = (await openApiDocument(t)).paths['/api/sso/providers/{id}'];
    const read = await admin.api.get('/api/sso/providers/AAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(read.body.detail, operation.get.responses['404'].description);
    const change = await admin.api.patch('/api/sso/providers/AAAAAAAAAAAAAAAAAAAAAA', { display_name: 'X' });
    assert.equal(change.body.detail, operation.patch.responses['404'].description);
    assert.equal(change.body.detail, 'That provider no longer exists.', 'the catalogue’s words');
  });

  test('deleting a provider deletes its identities and keeps the accounts; deleting again, or an id that cannot exist, is 204', async () => {
    const created = await declare();
    const carol = await buildAccount(t);
    await bind(created.id, carol.id, 'b1');
    const first = await admin.api.delete(`/api/sso/providers/${created.id}`);
    assert.equal(first.status, 204);
    assert.equal(first.text, '');
    assert.deepEqual(await rows(), []);
    assert.equal((await t.deps.db.selectFrom('sso_identities').select('id').execute()).length, 0);
    assert.ok(await t.deps.db.selectFrom('accounts').select('id').where('id', '=', carol.id).executeTakeFirst());
    assert.equal((await admin.api.delete(`/api/sso/providers/${created.id}`)).status, 204);
    assert.equal((await admin.api.delete('/api/sso/providers/not%00an%20id')).status, 204);
    assertProblem(await admin.api.get(`/api/sso/providers/${created.id}`), 404, 'not-found');
  });

  test('linked identities: newest first, cursor-paged, filtered by provider or account; removal is idempotent and keeps the account', async () => {
    const corp = await declare();
    const other = await declare({ slug: 'other', display_name: 'Other' });
    const carol = await buildAccount(t, { username: 'carol' });
    const dave = await buildAccount(t, { username: 'dave' });
    const at = t.clock.now();
    await bind(corp.id, carol.id, 'i1', at);
    await bind(corp.id, dave.id, 'i2', at + 1000);
    await bind(other.id, carol.id, 'i3', at + 1000);
    await bind(other.id, dave.id, 'i4', at + 2000);

    const first = await admin.api.get('/api/sso/identities?limit=3');
    assert.deepEqual(
      first.body.items.map((i: { id: string }) => i.id),
      ['i4', 'i3', 'i2'],
    );
    assert.deepEqual(first.body.items[0], {
      id: 'i4',
      provider_id: other.id,
      provider_slug: 'other',
      provider_display_name: 'Other',
      sub: 'sub-i4',
      label: 'i4@corp.example',
      account_id: dave.id,
      username: 'dave',
      linked_at: new Date(at + 2000).toISOString(),
    });
    assert.equal(typeof first.body.next_cursor, 'string');
    const second = await admin.api.get(`/api/sso/identities?limit=3&cursor=${first.body.next_cursor}`);
    assert.deepEqual(second.body, { items: [{ ...second.body.items[0], id: 'i1' }], next_cursor: null });
    const ofCorp = await admin.api.get(`/api/sso/identities?provider_id=${corp.id}`);
    assert.deepEqual(
      ofCorp.body.items.map((i: { id: string }) => i.id),
      ['i2', 'i1'],
    );
    const ofCarol = await admin.api.get(`/api/sso/identities?account_id=${carol.id}`);
    assert.deepEqual(
      ofCarol.body.items.map((i: { id: string }) => i.id),
      ['i3', 'i1'],
    );

    for (const cursor of [
      'nonsense',
      Buffer.from('[1]').toString('base64url'),
      Buffer.from('["x","y"]').toString('base64url'),
    ]) {
      const bad = await admin.api.get(`/api/sso/identities?cursor=${cursor}`);
      assertProblem(bad, 422, 'invalid');
      assert.equal(bad.body.errors[0].field, 'cursor');
    }
    const badFilter = await admin.api.get('/api/sso/identities?account_id=not%20an%20id');
    assertProblem(badFilter, 422, 'invalid');
    assert.deepEqual(
      badFilter.body.errors.map((e: { in: string; field: string }) => [e.in, e.field]),
      [['query', 'account_id']],
    );
    assertProblem(await admin.api.get('/api/sso/identities?limit=0'), 422, 'invalid');

    assert.equal((await admin.api.delete('/api/sso/identities/i1')).status, 204);
    assert.equal((await admin.api.delete('/api/sso/identities/i1')).status, 204);
    assert.deepEqual(
      (await admin.api.get(`/api/sso/identities?account_id=${carol.id}`)).body.items.map((i: { id: string }) => i.id),
      ['i3'],
    );
    assert.ok(await t.deps.db.selectFrom('accounts').select('id').where('id', '=', carol.id).executeTakeFirst());
  });

  test('an identity linked on the Profile shows in the API; one removed through the API is gone from the console', async () => {
    const app = buildTestApp(getDb(), { oidcCaFile: certs.caFile });
    const api = recorded((await buildApiUser(app, 'admin')).api);
    const created = await api.post('/api/sso/providers', {
      display_name: 'Corp IdP',
      slug: 'corp',
      issuer: idp.issuer,
      client_id: PUBLIC_CLIENT_ID,
    });
    assert.equal(created.status, 201, created.text);
    const alice = await buildAccount(app, { username: 'alice' });
    const browser = await signIn(app, alice);
    await confirmItsMe(browser, alice.password, 'sso');
    const sub = newSub();
    idp.claims.set(sub, { email: 'alice@corp.example' });
    assert.equal(
      (await roundTrip(browser, idp, '/profile/sso/corp/link', sub)).location,
      '/profile?sso=linked#profile-sso',
    );

    const listed = (await api.get('/api/sso/identities')).body.items;
    assert.deepEqual(
      listed.map((i: { sub: string; username: string; label: string }) => [i.sub, i.username, i.label]),
      [[sub, 'alice', 'alice@corp.example']],
    );
    const adminBrowser = await signIn(app, await buildAccount(app, { role: 'admin' }));
    assert.match((await adminBrowser.get('/settings?tab=sso')).text, /alice@corp\.example/);
    assert.equal((await api.delete(`/api/sso/identities/${listed[0].id}`)).status, 204);
    assert.doesNotMatch((await adminBrowser.get('/settings?tab=sso')).text, /alice@corp\.example/);
    assert.match((await browser.get('/profile')).text, /No identity is linked to your account/);
  });

  test('declaring and changing run the console’s discovery check: 422 discovery-failed on issuer in its words, unless skipped', async () => {
    const app = buildTestApp(getDb(), { oidcCaFile: certs.caFile });
    const api = recorded((await buildApiUser(app, 'admin')).api);
    const port = await closedPort();
    const unreachable = `https://127.0.0.1:${port}`;
    const before = idp.discoveryCount();
    const ok = await api.post('/api/sso/providers', {
      display_name: 'Corp IdP',
      slug: 'corp',
      issuer: idp.issuer,
      client_id: PUBLIC_CLIENT_ID,
    });
    assert.equal(ok.status, 201);
    assert.equal(idp.discoveryCount() - before, 1, 'discovery ran before saving');

    const refused = await api.post('/api/sso/providers', {
      display_name: 'Later',
      slug: 'later',
      issuer: unreachable,
      client_id: 'svc',
    });
    assertProblem(refused, 422, 'discovery-failed');
    assert.equal(refused.body.errors.length, 1);
    assert.equal(refused.body.errors[0].field, 'issuer');
    assert.match(
      refused.body.errors[0].detail,
      new RegExp(`^svc could not reach https://127\\.0\\.0\\.1:${port}: the host is unknown, refused the connection`),
    );
    assert.match(refused.body.detail, /skip_discovery/);
    // The app without the test CA does not trust the IdP: the console's certificate wording.
    const untrusted = await admin.api.post('/api/sso/providers', {
      display_name: 'Corp',
      slug: 'corp-2',
      issuer: idp.issuer,
      client_id: PUBLIC_CLIENT_ID,
    });
    assertProblem(untrusted, 422, 'discovery-failed');
    assert.match(
      untrusted.body.errors[0].detail,
      /does not trust its certificate\. For a provider behind a private CA, set SVC_OIDC_CA_FILE/,
    );
    assert.deepEqual(await rows(), [{ slug: 'corp' }], 'nothing saved');

    assert.equal(
      (
        await api.post('/api/sso/providers', {
          display_name: 'Later',
          slug: 'later',
          issuer: unreachable,
          client_id: 'svc',
          skip_discovery: true,
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await api.post('/api/sso/providers', {
          display_name: 'Off',
          slug: 'off',
          issuer: unreachable,
          client_id: 'svc',
          enabled: false,
        })
      ).status,
      201,
      'a disabled provider is saved without the check',
    );

    const url = `/api/sso/providers/${ok.body.id}`;
    const moved = await api.patch(url, { issuer: unreachable });
    assertProblem(moved, 422, 'discovery-failed');
    assert.equal((await row()).issuer, idp.issuer, 'nothing saved');
    const counted = idp.discoveryCount();
    assert.equal(
      (await api.patch(url, { display_name: 'Renamed', client_secret: SECRET })).status,
      200,
      'a change that discovery does not depend on is not checked',
    );
    assert.equal(idp.discoveryCount(), counted);
    assert.equal((await api.patch(url, { enabled: true })).status, 200, 'enabling checks, and the IdP answers');
    assert.equal(idp.discoveryCount() - counted, 1);
    const off = await api.patch(url, { issuer: unreachable, enabled: false });
    assert.equal(off.status, 200, 'disabling saves without the check');
    assertProblem(await api.patch(url, { enabled: true }), 422, 'discovery-failed');
    assert.equal((await api.patch(url, { enabled: true, skip_discovery: true })).status, 200);
    assert.equal((await row()).enabled, 1);
    noSecretsLeft();
  });

  test('a viewer’s token is refused every SSO route with 403 admin-only, reads included; nothing changes', async () => {
    const created = await declare();
    await bind(created.id, admin.account.id, 'b1');
    const viewer = await user('viewer');
    const calls: [string, string, unknown?][] = [
      ['GET', '/api/sso/providers'],
      ['GET', `/api/sso/providers/${created.id}`],
      ['GET', '/api/sso/identities'],
      ['POST', '/api/sso/providers', { ...DECLARE, slug: 'mine' }],
      ['PATCH', `/api/sso/providers/${created.id}`, { enabled: false }],
      ['DELETE', `/api/sso/providers/${created.id}`],
      ['DELETE', '/api/sso/identities/b1'],
    ];
    for (const [method, url, body] of calls)
      assertProblem(await viewer.api.request(method, url, body as never), 403, 'admin-only');
    assert.deepEqual(await rows(), [{ slug: 'corp' }]);
    assert.equal((await row()).enabled, 1);
    assert.equal((await t.deps.db.selectFrom('sso_identities').select('id').execute()).length, 1);
  });

  test('a read-only token reads providers and identities and is refused every write with 403 read-only-token', async () => {
    const created = await declare();
    await bind(created.id, admin.account.id, 'b1');
    const reader = await user('admin', { readOnly: true });
    assert.equal((await reader.api.get('/api/sso/providers')).status, 200);
    assert.equal((await reader.api.get(`/api/sso/providers/${created.id}`)).status, 200);
    assert.equal((await reader.api.get('/api/sso/identities')).body.items.length, 1);
    assertProblem(await reader.api.post('/api/sso/providers', { ...DECLARE, slug: 'mine' }), 403, 'read-only-token');
    assertProblem(
      await reader.api.patch(`/api/sso/providers/${created.id}`, { client_secret: null }),
      403,
      'read-only-token',
    );
    assertProblem(await reader.api.delete(`/api/sso/providers/${created.id}`), 403, 'read-only-token');
    assertProblem(await reader.api.delete('/api/sso/identities/b1'), 403, 'read-only-token');
    assert.deepEqual(await rows(), [{ slug: 'corp' }]);
    assert.equal((await t.deps.db.selectFrom('sso_identities').select('id').execute()).length, 1);
  });

  test('bodies must be JSON: another media type is 415, broken JSON 400, as problems', async () => {
    const form = await admin.api.request('POST', '/api/sso/providers', undefined, {
      raw: 'display_name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assertProblem(form, 415, 'unsupported-media-type');
    const broken = await admin.api.request('PATCH', '/api/sso/providers/AAAAAAAAAAAAAAAAAAAAAA', undefined, {
      raw: '{"display_name":',
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(broken, 400, 'malformed-json');
    assert.deepEqual(await rows(), []);
  });
});

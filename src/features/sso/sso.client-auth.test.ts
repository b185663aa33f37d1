// Client authentication at the token endpoint: the per-provider setting (automatic, client_secret_basic,
// client_secret_post), automatic's one retry in the body after a refused Basic header and what it remembers, the
// person's words for refused client credentials (distinct from a refused code), and the setting's refusal on the
// Settings form and the API when the provider's discovery does not list the method. The provider that refuses the
// header is the test IdP with a Glewlwyd-like token endpoint: it does not form-decode Basic credentials, so a client id
// and secret with `-` (sent as `%2D`, RFC 6749 2.3.1) never match there.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { buildApiUser, assertProblem } from '../../../test/helpers/api.ts';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import {
  bindIdentity,
  clearSsoState,
  newSub,
  pathOf,
  redirectUrisFor,
  roundTrip,
  startAndAuthorize,
} from '../../../test/helpers/sso.ts';
import {
  CONFIDENTIAL_CLIENT_ID,
  CONFIDENTIAL_CLIENT_SECRET,
  makeCertificates,
  PUBLIC_CLIENT_ID,
  serveDocument,
  startTestIdp,
  type LiteralBasicClient,
  type TestIdp,
} from '../../../test/helpers/test-idp.ts';
import { newId, systemRandom } from '../../deps.ts';
import { secretMethodsToTry } from './sso.oidc.ts';
import type { ProviderRow } from './sso.repo.ts';

/** UUID-like client credentials, as Glewlwyd and many consoles issue them: every `-` is sent as `%2D` in a header. */
const GLEW_ID = 'svc-5f0c2a9e-1b7d-4c3e-9a61-0d2f8e4b7c15';
const GLEW_SECRET = '0b8e5d1c-7f2a-4e9b-b3c6-91d4a7e2f058';
const glewlwyd: LiteralBasicClient = { clientId: GLEW_ID, clientSecret: GLEW_SECRET };

/** The person's words when the provider refuses svc's client credentials, and when it refuses the code. */
const CLIENT_WORDS = /The provider refused svc’s client credentials.*client ID, secret and client authentication/;
const CODE_WORDS = /did not accept this sign-in’s code/;

const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-client-auth-')));
let idp: TestIdp;
/** A provider whose discovery document is whatever a test sets (same test CA as the IdP). */
let doc: Awaited<ReturnType<typeof serveDocument>>;
before(async () => {
  idp = await startTestIdp({
    redirectUris: redirectUrisFor(['glew', 'conf', 'pub']),
    certs,
    literalBasicClient: glewlwyd,
  });
  doc = await serveDocument(certs);
});
after(async () => {
  await idp.close();
  await doc.close();
});

/** How many token requests the IdP received so far, refused ones included. */
const tokenPosts = () => idp.requests.filter((r) => r.method === 'POST' && r.path === '/token').length;

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: { id: string; username: string; password: string };

  beforeEach(async () => {
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
    admin = await buildAccount(t, { role: 'admin' });
    glewlwyd.refuse = undefined;
  });

  /** A provider at the test IdP with `client` credentials, bound to a fresh account's `sub`. */
  const providerWithUser = async (
    slug: string,
    client: { id: string; secret: string | null },
    method: ProviderRow['client_auth_method'] = 'automatic',
  ) => {
    const id = newId(systemRandom);
    await t.deps.db
      .insertInto('sso_providers')
      .values({
        id,
        display_name: `IdP ${slug}`,
        slug,
        issuer: idp.issuer,
        client_id: client.id,
        client_secret: client.secret,
        enabled: 1,
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
        created_by: admin.id,
        client_auth_method: method,
      })
      .execute();
    const user = await buildAccount(t);
    const sub = newSub();
    await bindIdentity(t, { providerId: id, sub, accountId: user.id });
    return { id, slug, sub, user };
  };
  const glew = (method?: ProviderRow['client_auth_method']) =>
    providerWithUser('glew', { id: GLEW_ID, secret: GLEW_SECRET }, method);
  const row = (id: string) =>
    t.deps.db.selectFrom('sso_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const signInAt = (p: { slug: string; sub: string }) => roundTrip(t.client(), idp, `/login/sso/${p.slug}`, p.sub);
  /** An admin's browser on the Settings tab. */
  const settings = async (): Promise<TestClient> => {
    const c = await signIn(t, admin);
    await c.get('/settings?tab=sso');
    return c;
  };
  /** No secret, nor its form-encoded or Basic-header form, in any log line. */
  const noSecretLogged = () => {
    const encoded = encodeURIComponent(GLEW_SECRET).replaceAll('-', '%2D');
    const basic = Buffer.from(`${GLEW_ID.replaceAll('-', '%2D')}:${encoded}`).toString('base64');
    for (const s of [GLEW_SECRET, encoded, basic, CONFIDENTIAL_CLIENT_SECRET])
      assert.ok(!t.logs.some((l) => l.includes(s)), `a secret in the log: ${s}`);
  };

  test('automatic: a provider that cannot read the Basic header gets the body once, remembers it, and later sign-ins go straight there', async () => {
    const p = await glew();
    const before = tokenPosts();
    const res = await signInAt(p);
    assert.equal(res.status, 303, res.text);
    assert.equal(res.location, '/');
    assert.equal(tokenPosts() - before, 2, 'the header, then the body');
    assert.deepEqual(idp.literalBasicRefused.at(-1), GLEW_ID.replaceAll('-', '%2D'), 'the id was form-encoded');
    assert.deepEqual(idp.tokenRequests.at(-1), {
      clientId: GLEW_ID,
      authMethod: 'client_secret_post',
      basicHeader: false,
      hadCodeVerifier: true,
    });
    const stored = await row(p.id);
    assert.equal(stored.client_auth_method, 'automatic');
    assert.equal(stored.client_auth_learned, 'client_secret_post');
    assert.equal(stored.client_auth_learned_at, t.clock.now());
    assert.ok(
      t.logs.some((l) => l.includes('"provider":"glew"') && l.includes('"retryWith":"client_secret_post"')),
      'the retry is logged',
    );

    const page = await (await settings()).get('/settings?tab=sso');
    assert.match(page.text, /Automatic, using <code>client_secret_post<\/code>: learned <time/);

    t.clock.advance(60_000);
    const again = tokenPosts();
    const second = await signInAt(p);
    assert.equal(second.status, 303, second.text);
    assert.equal(tokenPosts() - again, 1, 'straight to the body: the token endpoint saw one request');
    assert.equal(idp.tokenRequests.at(-1)!.authMethod, 'client_secret_post');
    assert.equal((await row(p.id)).client_auth_learned_at, stored.client_auth_learned_at, 'nothing learned anew');
    noSecretLogged();
  });

  test('automatic retries on invalid_client (401) as on unauthorized_client (403)', async () => {
    glewlwyd.refuse = { status: 401, error: 'invalid_client' };
    const p = await glew();
    const before = tokenPosts();
    const res = await signInAt(p);
    assert.equal(res.status, 303, res.text);
    assert.equal(tokenPosts() - before, 2);
    assert.equal((await row(p.id)).client_auth_learned, 'client_secret_post');
  });

  test('client_secret_basic chosen: refused client credentials are named as such to the person and in the log, without the secret', async () => {
    const p = await glew('client_secret_basic');
    const before = tokenPosts();
    const res = await signInAt(p);
    assert.equal(res.status, 502);
    assert.match(res.text, CLIENT_WORDS);
    assert.doesNotMatch(res.text, CODE_WORDS);
    assert.equal(tokenPosts() - before, 1, 'a chosen method is not retried');
    const line = t.logs.find((l) => l.includes('sso: provider step failed'));
    assert.ok(line, 'the failure is logged');
    const logged = JSON.parse(line);
    assert.equal(logged.provider, 'glew');
    assert.equal(logged.reason, 'client-refused');
    assert.equal(logged.clientAuth, 'client_secret_basic');
    assert.equal(logged.error.oauthError, 'unauthorized_client');
    assert.equal(logged.error.status, 403);
    assert.equal((await row(p.id)).client_auth_learned, null);
    assert.equal(
      (await t.deps.db.selectFrom('sessions').select('stage').where('account_id', '=', p.user.id).execute()).length,
      0,
    );
    noSecretLogged();
  });

  test('client_secret_post chosen: the body from the first request on', async () => {
    const p = await glew('client_secret_post');
    const before = tokenPosts();
    const refused = idp.literalBasicRefused.length;
    const res = await signInAt(p);
    assert.equal(res.status, 303, res.text);
    assert.equal(tokenPosts() - before, 1);
    assert.equal(idp.literalBasicRefused.length, refused);
    assert.equal(idp.tokenRequests.at(-1)!.authMethod, 'client_secret_post');
    assert.equal((await row(p.id)).client_auth_learned, null, 'a chosen method learns nothing');
  });

  test('a provider that reads the header (oidc-provider) still gets it once, and nothing is learned', async () => {
    const p = await providerWithUser('conf', { id: CONFIDENTIAL_CLIENT_ID, secret: CONFIDENTIAL_CLIENT_SECRET });
    const before = tokenPosts();
    const res = await signInAt(p);
    assert.equal(res.status, 303, res.text);
    assert.equal(tokenPosts() - before, 1);
    assert.equal(idp.tokenRequests.at(-1)!.authMethod, 'client_secret_basic');
    assert.equal((await row(p.id)).client_auth_learned, null);
  });

  test('a wrong secret: both methods refused (the 401 challenge too), the client-credentials words, nothing learned', async () => {
    const p = await providerWithUser('conf', { id: CONFIDENTIAL_CLIENT_ID, secret: 'not-the-registered-secret' });
    const before = tokenPosts();
    const res = await signInAt(p);
    assert.equal(res.status, 502);
    assert.match(res.text, CLIENT_WORDS);
    assert.equal(tokenPosts() - before, 2, 'the header, then the body once');
    const failures = t.logs.filter((l) => l.includes('sso: provider step failed')).map((l) => JSON.parse(l));
    assert.deepEqual(
      failures.map((f) => [f.reason, f.clientAuth, f.error.oauthError]),
      [
        ['client-refused', 'client_secret_basic', 'invalid_client'],
        ['client-refused', 'client_secret_post', 'invalid_client'],
      ],
    );
    assert.equal((await row(p.id)).client_auth_learned, null);
    assert.ok(!t.logs.some((l) => l.includes('not-the-registered-secret')));
  });

  test('a code the provider already exchanged still gets the code words, not the client-credentials words', async () => {
    const p = await providerWithUser('conf', { id: CONFIDENTIAL_CLIENT_ID, secret: CONFIDENTIAL_CLIENT_SECRET });
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/conf', p.sub);
    const flowCookie = c.cookies.get('svc_sso_flow')!;
    assert.equal((await c.get(pathOf(callback))).status, 303);
    // As if svc had not spent the flow: the same callback and cookie reach the token endpoint a second time.
    await t.deps.db.deleteFrom('sso_spent_states').execute();
    const replay = t.client();
    replay.cookies.set('svc_sso_flow', flowCookie);
    const before = tokenPosts();
    const res = await replay.get(pathOf(callback));
    assert.equal(res.status, 502);
    assert.match(res.text, CODE_WORDS);
    assert.doesNotMatch(res.text, CLIENT_WORDS);
    assert.equal(tokenPosts() - before, 1, 'a refused code is not retried');
    assert.ok(t.logs.some((l) => l.includes('"reason":"token-refused"') && l.includes('"oauthError":"invalid_grant"')));
  });

  test('a public client sends no credentials whatever the setting says, and its row says so', async () => {
    const p = await providerWithUser('pub', { id: PUBLIC_CLIENT_ID, secret: null }, 'client_secret_post');
    const res = await signInAt(p);
    assert.equal(res.status, 303, res.text);
    assert.equal(idp.tokenRequests.at(-1)!.authMethod, 'none');
    const page = await (await settings()).get('/settings?tab=sso');
    assert.match(page.text, /None: a public client \(PKCE only\) sends no client credentials/);
  });

  test('what was learned is forgotten when the secret, client id or setting changes, and kept by other saves', async () => {
    const p = await glew();
    assert.equal((await signInAt(p)).status, 303);
    const learned = () => row(p.id).then((r) => r.client_auth_learned);
    assert.equal(await learned(), 'client_secret_post');
    const c = await settings();
    const update = (fields: Record<string, string>) =>
      c.post('/settings/sso/update', {
        id: p.id,
        display_name: 'IdP glew',
        slug: 'glew',
        issuer: idp.issuer,
        client_id: GLEW_ID,
        client_auth_method: 'automatic',
        enabled: 'on',
        ...fields,
      });
    assert.equal((await update({ display_name: 'Glewlwyd' })).status, 303);
    assert.equal(await learned(), 'client_secret_post', 'a new display name keeps it');
    assert.equal((await c.post('/settings/sso/secret', { id: p.id, client_secret: GLEW_SECRET })).status, 303);
    assert.equal(await learned(), null, 'a new secret forgets it');

    assert.equal((await signInAt(p)).status, 303);
    assert.equal(await learned(), 'client_secret_post');
    assert.equal((await update({ client_auth_method: 'client_secret_post' })).status, 303);
    assert.equal(await learned(), null, 'a chosen method forgets it');
    assert.equal((await update({})).status, 303);

    assert.equal((await signInAt(p)).status, 303);
    assert.equal(await learned(), 'client_secret_post');
    const { api } = await buildApiUser(t, 'admin');
    const patched = await api.patch(`/api/sso/providers/${p.id}`, { client_id: GLEW_ID.toUpperCase() });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.client_auth_learned, null, 'a new client id forgets it');
  });

  test('the API shows the setting and what automatic learned', async () => {
    const p = await glew();
    const { api } = await buildApiUser(t, 'admin');
    const fresh = await api.get(`/api/sso/providers/${p.id}`);
    assert.equal(fresh.body.client_auth_method, 'automatic');
    assert.equal(fresh.body.client_auth_learned, null);
    assert.equal((await signInAt(p)).status, 303);
    const after = await api.get(`/api/sso/providers/${p.id}`);
    assert.deepEqual(after.body.client_auth_learned, {
      method: 'client_secret_post',
      learned_at: new Date(t.clock.now()).toISOString(),
    });
    assert.ok(!after.text.includes(GLEW_SECRET));
  });

  /** A discovery document listing `methods` (or none) for the token endpoint, at the document server. */
  const listing = (methods?: string[]) => {
    doc.document.body = {
      issuer: doc.url,
      authorization_endpoint: `${doc.url}/auth`,
      token_endpoint: `${doc.url}/token`,
      jwks_uri: `${doc.url}/jwks`,
      response_types_supported: ['code'],
      ...(methods ? { token_endpoint_auth_methods_supported: methods } : {}),
    };
  };

  test('the Settings form accepts a method only when the provider’s discovery lists it', async () => {
    const c = await settings();
    const declare = (client_auth_method: string) =>
      c.post('/settings/sso', {
        display_name: 'Doc IdP',
        slug: 'doc',
        issuer: doc.url,
        client_id: 'svc',
        client_secret: 'doc-secret-value-0001',
        client_auth_method,
      });
    const providers = () => t.deps.db.selectFrom('sso_providers').select(['slug', 'client_auth_method']).execute();

    listing(['client_secret_basic', 'private_key_jwt']);
    const refused = await declare('client_secret_post');
    assert.equal(refused.status, 422);
    assert.match(
      refused.text,
      /does not list client_secret_post for its token endpoint; it lists client_secret_basic\. Choose Automatic or a method it lists\./,
    );
    assert.match(refused.text, /id="sso-create-client_auth_method-error"/, 'beside the field');
    assert.ok(!refused.text.includes('doc-secret-value-0001'), 'the secret is not shown again');
    assert.deepEqual(await providers(), []);

    listing(undefined);
    const absent = await declare('client_secret_post');
    assert.equal(absent.status, 422, 'no list means client_secret_basic only');
    assert.deepEqual(await providers(), []);

    listing(['private_key_jwt']);
    const neither = await declare('client_secret_basic');
    assert.equal(neither.status, 422);
    assert.match(neither.text, /lists neither client_secret_basic nor client_secret_post/);
    assert.equal((await declare('automatic')).status, 303, 'automatic needs no listed method');
    await t.deps.db.deleteFrom('sso_providers').execute();

    listing(['client_secret_basic', 'client_secret_post']);
    assert.equal((await declare('client_secret_post')).status, 303);
    assert.deepEqual(await providers(), [{ slug: 'doc', client_auth_method: 'client_secret_post' }]);
    const page = await c.get('/settings?tab=sso');
    assert.match(page.text, /<code>client_secret_post<\/code> \(chosen\)/);

    // Changing it on the provider's form is checked the same way.
    const id = (await t.deps.db.selectFrom('sso_providers').select('id').executeTakeFirstOrThrow()).id;
    listing(['client_secret_post']);
    const change = await c.post('/settings/sso/update', {
      id,
      display_name: 'Doc IdP',
      slug: 'doc',
      issuer: doc.url,
      client_id: 'svc',
      client_auth_method: 'client_secret_basic',
      enabled: 'on',
    });
    assert.equal(change.status, 422);
    assert.match(change.text, new RegExp(`id="sso-update-${id}-client_auth_method-error"`));
    assert.match(change.text, /does not list client_secret_basic for its token endpoint; it lists client_secret_post/);
    assert.deepEqual(await providers(), [{ slug: 'doc', client_auth_method: 'client_secret_post' }]);

    const odd = await c.post('/settings/sso/update', {
      id,
      display_name: 'Doc IdP',
      slug: 'doc',
      issuer: doc.url,
      client_id: 'svc',
      client_auth_method: 'private_key_jwt',
      enabled: 'on',
    });
    assert.equal(odd.status, 400);
    assert.match(odd.text, /Choose the client authentication: automatic, client_secret_basic or client_secret_post\./);
  });

  test('the API refuses a method the provider’s discovery does not list (422 client-auth-not-listed, on the field)', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const body = {
      display_name: 'Doc IdP',
      slug: 'doc',
      issuer: doc.url,
      client_id: 'svc',
      client_secret: 'doc-secret-value-0001',
    };
    listing(['client_secret_basic']);
    const refused = await api.post('/api/sso/providers', { ...body, client_auth_method: 'client_secret_post' });
    assertProblem(refused, 422, 'client-auth-not-listed');
    assert.deepEqual(refused.body.errors, [
      {
        in: 'body',
        field: 'client_auth_method',
        detail:
          "The provider's discovery document does not list client_secret_post for its token endpoint; it lists client_secret_basic. Choose Automatic or a method it lists.",
      },
    ]);
    assert.equal((await t.deps.db.selectFrom('sso_providers').select('id').execute()).length, 0);

    const created = await api.post('/api/sso/providers', { ...body, client_auth_method: 'client_secret_basic' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.client_auth_method, 'client_secret_basic');
    const id = created.body.id;

    const patch = await api.patch(`/api/sso/providers/${id}`, { client_auth_method: 'client_secret_post' });
    assertProblem(patch, 422, 'client-auth-not-listed');
    listing(['client_secret_basic', 'client_secret_post']);
    const ok = await api.patch(`/api/sso/providers/${id}`, { client_auth_method: 'client_secret_post' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.client_auth_method, 'client_secret_post');

    // Back to automatic needs no discovery: the provider's document may be unusable by now.
    doc.document.body = {};
    const auto = await api.patch(`/api/sso/providers/${id}`, { client_auth_method: 'automatic' });
    assert.equal(auto.status, 200, auto.text);
    assert.equal(auto.body.client_auth_method, 'automatic');

    const invalid = await api.patch(`/api/sso/providers/${id}`, { client_auth_method: 'none' });
    assert.equal(invalid.status, 422);
    assert.equal(invalid.body.errors[0].field, 'client_auth_method');
  });
});

test('the order of methods tried: a chosen one alone; automatic the learned one, else the header, then the other listed', () => {
  const p = (fields: Partial<ProviderRow>) =>
    ({
      client_secret: 's3cret',
      client_auth_method: 'automatic',
      client_auth_learned: null,
      ...fields,
    }) as ProviderRow;
  const both = { token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'] };
  assert.deepEqual(secretMethodsToTry(p({}), both), ['client_secret_basic', 'client_secret_post']);
  assert.deepEqual(secretMethodsToTry(p({ client_auth_learned: 'client_secret_post' }), both), [
    'client_secret_post',
    'client_secret_basic',
  ]);
  assert.deepEqual(secretMethodsToTry(p({}), {}), ['client_secret_basic'], 'no list: the header alone');
  assert.deepEqual(
    secretMethodsToTry(p({ client_auth_learned: 'client_secret_post' }), {}),
    ['client_secret_basic'],
    'a learned method the provider no longer lists is not used',
  );
  assert.deepEqual(secretMethodsToTry(p({}), { token_endpoint_auth_methods_supported: ['client_secret_post'] }), [
    'client_secret_post',
  ]);
  assert.deepEqual(secretMethodsToTry(p({}), { token_endpoint_auth_methods_supported: ['private_key_jwt'] }), [
    'client_secret_basic',
  ]);
  assert.deepEqual(secretMethodsToTry(p({ client_auth_method: 'client_secret_post' }), {}), ['client_secret_post']);
  assert.equal(
    secretMethodsToTry(p({ client_secret: null, client_auth_method: 'client_secret_post' }), both),
    undefined,
  );
});

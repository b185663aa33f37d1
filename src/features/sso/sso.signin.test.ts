import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import type * as oidc from 'openid-client';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import {
  buildProvider,
  clearSsoState,
  newSub,
  pathOf,
  redirectUrisFor,
  roundTrip,
  startAndAuthorize,
} from '../../../test/helpers/sso.ts';
import {
  CONFIDENTIAL_CLIENT_ID,
  makeCertificates,
  PUBLIC_CLIENT_ID,
  serveDocument,
  startTestIdp,
  type TestIdp,
} from '../../../test/helpers/test-idp.ts';
import type { Deps } from '../../deps.ts';
import { createSession } from '../auth/sessions.service.ts';
import { clientAuth } from './sso.discovery.ts';
import { accountForIdentity, openSessionThrough } from './sso.flow.service.ts';
import { changeProvider, removeIdentity } from './sso.providers.service.ts';
import { findProviderBySlug } from './sso.repo.ts';

let idp: TestIdp;
/** A provider whose discovery document is whatever a test sets (same test CA as the IdP). */
let broken: Awaited<ReturnType<typeof serveDocument>>;
before(async () => {
  const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-signin-')));
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['pub', 'conf']), certs });
  broken = await serveDocument(certs);
});
after(async () => {
  await idp.close();
  await broken.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: { id: string; username: string; password: string };

  beforeEach(async () => {
    const db = getDb().db;
    await clearSsoState(db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
    admin = await buildAccount(t, { role: 'admin' });
  });

  /** Binds `sub` at provider `providerId` to the account directly (the link flow has its own tests). */
  const bind = (providerId: string, accountId: string, sub: string, label = sub) =>
    t.deps.db
      .insertInto('sso_identities')
      .values({ id: `b-${sub}`, provider_id: providerId, sub, account_id: accountId, label, linked_at: 1 })
      .execute();
  const sessionsOf = (accountId: string) =>
    t.deps.db.selectFrom('sessions').select('stage').where('account_id', '=', accountId).execute();

  test('public client: PKCE S256, state and nonce on the request; no secret at the token endpoint; bound account signed in', async () => {
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const user = await buildAccount(t);
    const sub = newSub();
    await bind(p.id, user.id, sub);
    const c = t.client();
    const start = await c.get('/login/sso/pub');
    assert.equal(start.status, 303);
    const auth = new URL(start.location!);
    assert.equal(auth.origin, idp.issuer);
    const q = auth.searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), PUBLIC_CLIENT_ID);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('state') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get('redirect_uri'), 'http://localhost/login/sso/pub/callback');
    assert.deepEqual(q.get('scope')?.split(' ').sort(), ['email', 'openid', 'profile']);
    const flowCookie = start.headers.getSetCookie().find((l) => l.startsWith('svc_sso_flow='))!;
    assert.match(flowCookie, /HttpOnly/);
    assert.match(flowCookie, /SameSite=Lax/);
    assert.match(flowCookie, /Max-Age=600/);
    assert.match(flowCookie, /Path=\//);

    const second = await t.client().get('/login/sso/pub');
    const q2 = new URL(second.location!).searchParams;
    assert.notEqual(q2.get('state'), q.get('state'), 'a fresh state per login');
    assert.notEqual(q2.get('nonce'), q.get('nonce'), 'a fresh nonce per login');

    const callback = await idp.authorize(start.location!, sub);
    assert.equal(callback.searchParams.get('iss'), idp.issuer, 'the IdP sends RFC 9207 iss');
    const res = await c.get(pathOf(callback));
    assert.equal(res.status, 303);
    assert.equal(res.location, '/');
    assert.ok(
      res.headers.getSetCookie().some((l) => /^svc_sso_flow=;/.test(l) && /Max-Age=0/i.test(l)),
      'flow cookie cleared on use',
    );
    const exchange = idp.tokenRequests.at(-1)!;
    assert.deepEqual(exchange, {
      clientId: PUBLIC_CLIENT_ID,
      authMethod: 'none',
      basicHeader: false,
      hadCodeVerifier: true,
    });
    const home = await c.get('/');
    assert.equal(home.status, 200);
    assert.ok(home.text.includes(user.username));
    assert.deepEqual(await sessionsOf(user.id), [{ stage: 'full' }]);
  });

  test('confidential client: the secret is sent (client_secret_basic) along with the PKCE verifier', async () => {
    const p = await buildProvider(t, idp, { slug: 'conf', createdBy: admin.id, confidential: true });
    const user = await buildAccount(t);
    const sub = newSub();
    await bind(p.id, user.id, sub);
    const c = t.client();
    const res = await roundTrip(c, idp, '/login/sso/conf', sub);
    assert.equal(res.status, 303);
    assert.equal(res.location, '/');
    assert.deepEqual(idp.tokenRequests.at(-1), {
      clientId: CONFIDENTIAL_CLIENT_ID,
      authMethod: 'client_secret_basic',
      basicHeader: true,
      hadCodeVerifier: true,
    });
    assert.equal((await c.get('/')).status, 200);
  });

  test('an account with TOTP lands on the two-factor step and owes its code; no page is reachable before it', async () => {
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const user = await buildAccount(t);
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_enabled: 1, totp_secret: 'JBSWY3DPEHPK3PXP' })
      .where('id', '=', user.id)
      .execute();
    const sub = newSub();
    await bind(p.id, user.id, sub);
    const c = t.client();
    const res = await roundTrip(c, idp, '/login/sso/pub', sub);
    assert.equal(res.status, 303);
    assert.equal(res.location, '/login/totp');
    assert.deepEqual(await sessionsOf(user.id), [{ stage: 'totp' }]);
    for (const path of ['/', '/settings', '/profile/sso/pub/link']) {
      const page = await c.get(path);
      assert.equal(page.status, 303, path);
      assert.equal(page.location, '/login/totp', path);
    }
  });

  test('an identity bound to no account is refused with the link-on-Profile message; nothing is created', async () => {
    await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const before = await t.deps.db.selectFrom('accounts').select('id').execute();
    const c = t.client();
    const res = await roundTrip(c, idp, '/login/sso/pub', newSub());
    assert.equal(res.status, 403);
    assert.match(res.text, /not linked to any account/);
    assert.match(res.text, /Sign in with your password, then link it on your Profile/);
    assert.equal((await t.deps.db.selectFrom('sessions').select('id_hash').execute()).length, 0);
    assert.equal((await t.deps.db.selectFrom('accounts').select('id').execute()).length, before.length);
    assert.equal((await c.get('/')).location, '/login');
  });

  test('a matching e-mail claim never signs into another account', async () => {
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const dave = await buildAccount(t, { username: 'dave@corp.example' });
    const erin = await buildAccount(t, { username: 'erin' });
    const erinSub = newSub();
    idp.claims.set(erinSub, { email: 'erin@corp.example' });
    await bind(p.id, erin.id, erinSub, 'erin@corp.example');
    for (const email of ['dave@corp.example', 'erin@corp.example', 'erin']) {
      const sub = newSub();
      idp.claims.set(sub, { email, email_verified: true, preferred_username: email });
      const res = await roundTrip(t.client(), idp, '/login/sso/pub', sub);
      assert.equal(res.status, 403, email);
    }
    assert.deepEqual(await sessionsOf(dave.id), []);
    assert.deepEqual(await sessionsOf(erin.id), []);
    // Erin's own identity still works: the binding is the (provider, sub) pair.
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', erinSub)).location, '/');
  });

  test('a disabled provider: no button, start refused, in-flight callback refused; password sign-in still works', async () => {
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const user = await buildAccount(t);
    const sub = newSub();
    await bind(p.id, user.id, sub);
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    await t.deps.db.updateTable('sso_providers').set({ enabled: 0 }).where('id', '=', p.id).execute();
    const inFlight = await c.get(pathOf(callback));
    assert.equal(inFlight.status, 403);
    assert.match(inFlight.text, /turned this single sign-on provider off/);
    const start = await t.client().get('/login/sso/pub');
    assert.equal(start.status, 403);
    assert.equal(start.location, undefined);
    assert.doesNotMatch((await t.client().get('/login')).text, /href="\/login\/sso\//, 'no provider’s button');
    assert.deepEqual(await sessionsOf(user.id), []);
    const pw = await signIn(t, user);
    assert.equal((await pw.get('/')).status, 200);
  });

  test('an unknown slug is a 404 page at start and callback', async () => {
    assert.equal((await t.client().get('/login/sso/nope')).status, 404);
    assert.equal((await t.client().get('/login/sso/nope/callback?code=x&state=y')).status, 404);
    assert.equal((await t.client().get('/login/sso/NOT%20A%20SLUG')).status, 404);
  });

  test('redirect_uri comes from SVC_EXTERNAL_URL or the request itself; X-Forwarded-* has no effect', async () => {
    await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const forwarded = {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      forwarded: 'host=evil.example;proto=https',
    };
    const redirectUri = async (app: TestApp) =>
      new URL((await app.client().get('/login/sso/pub', forwarded)).location!).searchParams.get('redirect_uri');
    assert.equal(await redirectUri(t), 'http://localhost/login/sso/pub/callback');
    assert.equal(
      await redirectUri(buildTestApp(getDb(), { oidcCaFile: idp.caFile, secureCookies: true })),
      'https://localhost/login/sso/pub/callback',
    );
    assert.equal(
      await redirectUri(buildTestApp(getDb(), { oidcCaFile: idp.caFile, externalUrl: 'https://svc.example.org' })),
      'https://svc.example.org/login/sso/pub/callback',
    );
  });

  test('cancelling at the provider is a specific message', async () => {
    await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', newSub(), { cancel: true });
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    const res = await c.get(pathOf(callback));
    assert.equal(res.status, 400);
    assert.match(res.text, /Sign-in was cancelled at the provider/);
  });

  test('a binding removed, or the provider disabled, after the sign-in found its account: no session opens; re-bound elsewhere neither', async () => {
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const user = await buildAccount(t);
    const sub = newSub();
    await bind(p.id, user.id, sub);
    const provider = (await findProviderBySlug(t.deps.db, 'pub'))!;
    const found = await accountForIdentity(t.deps, provider, sub);
    assert.ok(found.ok && found.account.id === user.id);
    const origin = { providerId: p.id, sub, sid: undefined, idToken: 'an-id-token' };
    const open = (inTransaction: Deps) => createSession(inTransaction, user.id, 'full', 'test', undefined, origin);
    const actor = { actorId: admin.id };

    // Unlinked (here by an admin) between the look-up and the session: the removal's ending of sessions came first.
    await removeIdentity(t.deps, actor, `b-${sub}`);
    assert.deepEqual(await openSessionThrough(t.deps, provider, sub, user.id, open), { ok: false, reason: 'unbound' });
    assert.equal((await sessionsOf(user.id)).length, 0);

    await bind(p.id, user.id, sub);
    assert.ok((await changeProvider(t.deps, actor, { id: p.id, enabled: false })).ok);
    assert.deepEqual(await openSessionThrough(t.deps, provider, sub, user.id, open), { ok: false, reason: 'disabled' });
    assert.equal((await sessionsOf(user.id)).length, 0);

    assert.ok((await changeProvider(t.deps, actor, { id: p.id, enabled: true })).ok);
    const opened = await openSessionThrough(t.deps, provider, sub, user.id, open);
    assert.ok(opened.ok);
    assert.equal((await sessionsOf(user.id)).length, 1);

    // A removal that starts while the session is being opened waits for it, then ends it with the others.
    let removal: Promise<unknown> | undefined;
    const racing = await openSessionThrough(t.deps, provider, sub, user.id, async (inTransaction) => {
      removal = removeIdentity(t.deps, actor, `b-${sub}`);
      return open(inTransaction);
    });
    assert.ok(racing.ok);
    await removal;
    assert.equal((await sessionsOf(user.id)).length, 0, 'the removal ended the session opened while it waited');

    const other = await buildAccount(t);
    await bind(p.id, other.id, sub);
    assert.deepEqual(await openSessionThrough(t.deps, provider, sub, user.id, open), { ok: false, reason: 'unbound' });
    assert.equal((await sessionsOf(user.id)).length, 0);
  });

  test('provider unreachable, untrusted certificate and invalid discovery are safe messages with details in the log', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id, issuer: `https://127.0.0.1:${closed}` });
    const down = await t.client().get('/login/sso/pub');
    assert.equal(down.status, 502);
    assert.match(down.text, /could not be reached/);
    assert.doesNotMatch(down.text, /ECONNREFUSED|127\.0\.0\.1/);
    assert.ok(t.logs.some((l) => l.includes('"reason":"unreachable"') && l.includes('ECONNREFUSED')));

    await t.deps.db.updateTable('sso_providers').set({ issuer: idp.issuer }).execute();
    const untrusting = buildTestApp(getDb());
    const tls = await untrusting.client().get('/login/sso/pub');
    assert.equal(tls.status, 502, 'without SVC_OIDC_CA_FILE the private CA is not trusted');
    assert.ok(untrusting.logs.some((l) => l.includes('"reason":"unreachable"')));

    await t.deps.db
      .updateTable('sso_providers')
      .set({ issuer: `${idp.issuer}/not-an-issuer` })
      .execute();
    const bad = await t.client().get('/login/sso/pub');
    assert.equal(bad.status, 502);
    assert.match(bad.text, /configuration could not be used/);
    assert.ok(t.logs.some((l) => l.includes('"reason":"discovery-invalid"')));
  });

  test('a malformed discovery document is the misconfigured-provider page at sign-in start, never a 500', async () => {
    await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id, issuer: broken.url });
    const documents: Record<string, unknown>[] = [
      { issuer: broken.url },
      { issuer: broken.url, authorization_endpoint: 'http://127.0.0.1/auth' },
      { issuer: broken.url, authorization_endpoint: 5 },
      { issuer: broken.url, authorization_endpoint: 'not a url' },
    ];
    for (const doc of documents) {
      broken.document.body = doc;
      const res = await t.client().get('/login/sso/pub');
      assert.equal(res.status, 502, JSON.stringify(doc));
      assert.match(res.text, /Provider misconfigured/, JSON.stringify(doc));
      assert.match(res.text, /configuration could not be used/, JSON.stringify(doc));
    }
    assert.equal(
      t.logs.filter((l) => l.includes('"reason":"discovery-invalid"') && l.includes('"step":"authorize"')).length,
      documents.length,
    );
    // A malformed optional list is ignored: only openid is asked for.
    broken.document.body = { issuer: broken.url, authorization_endpoint: `${broken.url}/auth`, scopes_supported: 5 };
    const odd = await t.client().get('/login/sso/pub');
    assert.equal(odd.status, 303);
    assert.equal(new URL(odd.location!).searchParams.get('scope'), 'openid');
    broken.document.body = {
      issuer: broken.url,
      authorization_endpoint: `${broken.url}/auth`,
      scopes_supported: 'email profile',
    };
    assert.equal(new URL((await t.client().get('/login/sso/pub')).location!).searchParams.get('scope'), 'openid');
  });

  test('an issuer stored with a /.well-known/ path is refused at start: openid-client would skip its issuer check', async () => {
    // Written before validation refused such issuers; the document there names the real issuer, which never matches.
    await buildProvider(t, idp, {
      slug: 'pub',
      createdBy: admin.id,
      issuer: `${idp.issuer}/.well-known/openid-configuration`,
    });
    const res = await t.client().get('/login/sso/pub');
    assert.equal(res.status, 502);
    assert.match(res.text, /configuration could not be used/);
    assert.ok(t.logs.some((l) => l.includes('"reason":"discovery-invalid"') && l.includes('/.well-known/')));
  });
});

test('a confidential client reads the token endpoint auth methods only from a list: anything else means client_secret_basic', () => {
  const sent = (methods: unknown) => {
    const body = new URLSearchParams();
    const headers = new Headers();
    const as = {
      issuer: 'https://idp.example',
      token_endpoint_auth_methods_supported: methods,
    } as unknown as Parameters<oidc.ClientAuth>[0];
    clientAuth('s3cret')(as, { client_id: 'svc' }, body, headers);
    return { basic: /^Basic /.test(headers.get('authorization') ?? ''), post: body.get('client_secret') === 's3cret' };
  };
  assert.deepEqual(sent(5), { basic: true, post: false });
  assert.deepEqual(sent('client_secret_post'), { basic: true, post: false });
  assert.deepEqual(sent(undefined), { basic: true, post: false });
  assert.deepEqual(sent(['client_secret_post']), { basic: false, post: true });
});

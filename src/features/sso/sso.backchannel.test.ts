// Back-Channel Logout against the real OpenID Provider: the provider itself posts a logout token when the person signs
// out there, and the sessions it opened end (pending second-factor sign-ins too); password sessions, API tokens and the
// account stay. Tokens the tests sign themselves are refused for each failed check, and then no session ends.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { serve } from '@hono/node-server';
import { importJWK, type JWK, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { enrolTotp } from '../../../test/helpers/second-factor.ts';
import {
  bindIdentity,
  buildProvider,
  clearSsoState,
  newSub,
  redirectUrisFor,
  roundTrip,
} from '../../../test/helpers/sso.ts';
import { makeCertificates, PUBLIC_CLIENT_ID, startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { BACKCHANNEL_LOGOUT_EVENT, pruneLogoutJtis } from './sso.backchannel.service.ts';

const METRICS_TOKEN = 'metrics-token-0123456789';

/** The app of the test running now, served on loopback so the IdP can post its logout tokens to it. */
let current: TestApp | undefined;
let front: { url: string; close(): void };
let idp: TestIdp;
before(async () => {
  const server = serve({ fetch: (req) => current!.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  front = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
  const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-backchannel-')));
  idp = await startTestIdp({
    redirectUris: redirectUrisFor(['corp']),
    certs,
    logout: { backchannelLogoutUri: `${front.url}/login/sso/corp/backchannel-logout` },
  });
});
after(async () => {
  front.close();
  await idp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let corp: { id: string; slug: string };
  let user: { id: string; username: string; password: string };
  let sub: string;

  beforeEach(async () => {
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile, metricsToken: METRICS_TOKEN });
    current = t;
    // The IdP stamps its tokens with the real time; svc checks them by its clock.
    t.clock.t = Date.now();
    const admin = await buildAccount(t, { role: 'admin' });
    corp = await buildProvider(t, idp, { slug: 'corp', createdBy: admin.id });
    user = await buildAccount(t);
    sub = newSub();
    await bindIdentity(t, { providerId: corp.id, sub, accountId: user.id });
  });

  /** A browser signed in through the provider (the IdP keeps that sign-in's session for endSession()). */
  const ssoClient = async (): Promise<TestClient> => {
    const client = t.client();
    const res = await roundTrip(client, idp, '/login/sso/corp', sub);
    assert.equal(res.status, 303, res.text.slice(0, 300));
    return client;
  };
  const signedIn = async (client: TestClient) => (await client.get('/')).status === 200;
  const sessionRows = () =>
    t.deps.db.selectFrom('sessions').select(['stage', 'sso_sid', 'sso_provider_id']).orderBy('created_at').execute();
  const post = (token: string, slug = 'corp') =>
    t.client().request(`/login/sso/${slug}/backchannel-logout`, {
      method: 'POST',
      body: new URLSearchParams({ logout_token: token }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  /** A logout token signed with the IdP's own key unless told otherwise; `claims` replace or (undefined) drop some. */
  const logoutToken = async (
    claims: Record<string, unknown> = {},
    opts: { key?: JWK; alg?: string; kid?: string; typ?: string | null } = {},
  ): Promise<string> => {
    const payload: JWTPayload = {
      iss: idp.issuer,
      aud: PUBLIC_CLIENT_ID,
      iat: Math.floor(t.clock.now() / 1000),
      exp: Math.floor(t.clock.now() / 1000) + 120,
      jti: crypto.randomUUID(),
      sub,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    };
    for (const [k, v] of Object.entries(claims)) {
      if (v === undefined) delete payload[k];
      else payload[k] = v;
    }
    const key = opts.key ?? idp.signingKey();
    const alg = opts.alg ?? 'RS256';
    const typ = opts.typ === undefined ? 'logout+jwt' : opts.typ;
    return new SignJWT(payload)
      .setProtectedHeader({ alg, kid: opts.kid ?? key.kid, ...(typ === null ? {} : { typ }) })
      .sign(await importJWK(key, alg));
  };

  test('the provider posts a logout token when the person signs out there: the session it opened is gone on the next request', async () => {
    const sso = await ssoClient();
    const [row] = await sessionRows();
    assert.equal(row?.sso_provider_id, corp.id);
    assert.ok(row?.sso_sid, 'the id_token carried the provider session id');
    const password = await signIn(t, user);
    const { token } = await createToken(t.deps, user.id, { name: 'ci', expiry: '90' });
    const before = await t.deps.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();

    const back = await idp.endSession();
    assert.equal(back.pathname, '/session/end/success');
    assert.deepEqual(idp.backchannelLogouts.at(-1), { clientId: PUBLIC_CLIENT_ID });

    assert.equal(await signedIn(sso), false, 'the session the provider opened ended');
    assert.equal((await sso.get('/')).location, '/login');
    assert.equal(await signedIn(password), true, 'the password session of the same account stays');
    assert.equal((await t.client().get('/api/me', { authorization: `Bearer ${token}` })).status, 200, 'and its token');
    const afterwards = await t.deps.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(afterwards, before, 'the account is not changed');
    assert.ok(t.logs.some((l) => l.includes('back-channel logout accepted') && l.includes('"ended":1')));
    assert.ok(!t.logs.some((l) => /eyJ[\w-]+\.eyJ/.test(l)), 'no token in a log line');
  });

  test('a token naming the subject alone ends every session the provider opened for it, pending second-factor sign-ins too', async () => {
    const first = await ssoClient();
    const second = await ssoClient();
    await signIn(t, user);
    const other = await buildAccount(t);
    const otherSub = newSub();
    await bindIdentity(t, { providerId: corp.id, sub: otherSub, accountId: other.id, label: 'o' });
    const bystander = t.client();
    assert.equal((await roundTrip(bystander, idp, '/login/sso/corp', otherSub)).status, 303);
    await enrolTotp(t, user);
    const pending = await ssoClient();
    assert.equal((await pending.get('/')).location, '/login/totp', 'this sign-in owes a second factor');
    assert.equal((await sessionRows()).filter((r) => r.sso_provider_id === corp.id).length, 4);

    const res = await post(await logoutToken({ sub }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.text, '');
    assert.equal(await signedIn(first), false);
    assert.equal(await signedIn(second), false);
    assert.equal((await pending.get('/login/totp')).location, '/login', 'the pending sign-in ended too');
    assert.equal(await signedIn(bystander), true, "another person's session stays");
    const left = await t.deps.db.selectFrom('sessions').select(['account_id', 'sso_provider_id']).execute();
    assert.deepEqual(
      left.map((r) => [r.account_id, r.sso_provider_id]).sort(),
      [
        [other.id, corp.id],
        [user.id, null],
      ].sort(),
    );
  });

  test('a token naming a provider session ends only the sessions opened in it; an unknown one ends nothing (200)', async () => {
    const first = await ssoClient();
    const second = await ssoClient();
    const [a, b] = await sessionRows();
    assert.ok(a?.sso_sid && b?.sso_sid && a.sso_sid !== b.sso_sid, 'two sign-ins at the provider, two sids');

    const unknown = await post(await logoutToken({ sub: undefined, sid: 'no-such-session' }));
    assert.equal(unknown.status, 200);
    assert.equal((await sessionRows()).length, 2);

    const res = await post(await logoutToken({ sub: undefined, sid: a.sso_sid }));
    assert.equal(res.status, 200);
    assert.equal(await signedIn(first), false);
    assert.equal(await signedIn(second), true);
    // With both claims, the sid must belong to that sub: another subject's name ends nothing.
    assert.equal((await post(await logoutToken({ sub: 'someone-else', sid: b.sso_sid }))).status, 200);
    assert.equal(await signedIn(second), true);
  });

  test('a token naming both sub and sid also ends that subject’s sessions whose id_token named no provider session', async () => {
    const noSid = await ssoClient();
    const withSid = await ssoClient();
    const [a, b] = await t.deps.db
      .selectFrom('sessions')
      .select(['id_hash', 'sso_sid'])
      .orderBy('created_at')
      .execute();
    // As when the id_token of that sign-in carried no `sid` (the provider adds it only when asked to).
    await t.deps.db.updateTable('sessions').set({ sso_sid: null }).where('id_hash', '=', a!.id_hash).execute();

    assert.equal((await post(await logoutToken({ sub: 'someone-else', sid: 'another-provider-session' }))).status, 200);
    assert.equal(await signedIn(noSid), true, "another subject's token ends nothing");
    const res = await post(await logoutToken({ sub, sid: 'another-provider-session' }));
    assert.equal(res.status, 200);
    assert.equal(await signedIn(noSid), false, 'the session opened without a sid ended');
    assert.equal(await signedIn(withSid), true, 'a session opened in another provider session stays');
    assert.equal((await post(await logoutToken({ sub: undefined, sid: 'another-provider-session' }))).status, 200);
    assert.equal(await signedIn(withSid), true);
    assert.equal((await post(await logoutToken({ sub, sid: b!.sso_sid }))).status, 200);
    assert.equal(await signedIn(withSid), false, 'its own sid ends it');
  });

  test('a typ header other than JWT or logout+jwt is refused before the provider is asked; those two, in any case, and none are accepted', async () => {
    const sso = await ssoClient();
    for (const typ of ['at+jwt', 'JOSE', 'application/secevent+jwt', 'logout']) {
      const before = idp.requests.length;
      const res = await post(await logoutToken({}, { typ }));
      assert.equal(res.status, 400, typ);
      assert.match(JSON.parse(res.text).error_description, /typ/, typ);
      assert.equal(idp.requests.length, before, `${typ}: the provider is not contacted`);
    }
    assert.equal(await signedIn(sso), true);
    for (const typ of ['JWT', 'jwt', 'logout+jwt', 'Logout+JWT', 'application/logout+jwt', 'application/jwt', null]) {
      const other = await ssoClient();
      const res = await post(await logoutToken({}, { typ }));
      assert.equal(res.status, 200, `${typ}: ${res.text}`);
      assert.equal(await signedIn(other), false, String(typ));
    }
  });

  test('keys the provider cannot serve (its keys URL answers 500) are 503 temporarily_unavailable, and no session ends', async () => {
    const sso = await ssoClient();
    idp.failPath('/jwks', 500);
    try {
      const res = await post(await logoutToken());
      assert.equal(res.status, 503, res.text);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(JSON.parse(res.text).error, 'temporarily_unavailable');
      assert.equal(await signedIn(sso), true);
      assert.ok(t.logs.some((l) => l.includes('"reason":"keys-unavailable"')));
    } finally {
      idp.failPath('/jwks');
    }
    // Once the provider serves its keys again (and the pause after the failure is over), its tokens are accepted.
    t.clock.advance(31_000);
    assert.equal((await post(await logoutToken())).status, 200);
    assert.equal(await signedIn(sso), false);
  });

  test('while the provider fails, posted tokens do not make svc contact it each time; a malformed token contacts it never', async () => {
    const count = (at: string) => idp.requests.filter((r) => r.path === at).length;
    const malformed = [
      'x',
      'a.b',
      'a.b.c',
      'not.a.jwt',
      'eyJ.eyJ.sig',
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.e30.`,
      `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.e30.c2ln`,
      `${Buffer.from('{"typ":"JWT"}').toString('base64url')}.e30.c2ln`,
      `${(await logoutToken()).split('.').slice(0, 2).join('.')}`,
      `${await logoutToken()}.extra.part`,
    ];
    const before = idp.requests.length;
    for (const token of malformed) assert.equal((await post(token)).status, 400, token);
    assert.equal(idp.requests.length, before, 'no request to the provider for a malformed token, not even discovery');

    const sso = await ssoClient();
    idp.failPath('/jwks', 500);
    try {
      const keysBefore = count('/jwks');
      for (let i = 0; i < 20; i++) assert.equal((await post(await logoutToken())).status, 503);
      assert.equal(count('/jwks') - keysBefore, 1, 'the failing keys URL was asked once');
      t.clock.advance(31_000);
      assert.equal((await post(await logoutToken())).status, 503);
      assert.equal(count('/jwks') - keysBefore, 2, 'and once more after the pause');
    } finally {
      idp.failPath('/jwks');
    }
    assert.equal(await signedIn(sso), true);

    // A discovery that fails is remembered the same way (a fresh app: no discovery cached yet).
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile, metricsToken: METRICS_TOKEN });
    current = t;
    t.clock.t = Date.now();
    idp.failPath('/.well-known/openid-configuration', 500);
    try {
      const discoveryBefore = idp.discoveryCount();
      for (let i = 0; i < 20; i++) assert.equal((await post(await logoutToken())).status, 503);
      assert.equal(idp.discoveryCount() - discoveryBefore, 1, 'the failing discovery was asked once');
    } finally {
      idp.failPath('/.well-known/openid-configuration');
    }
    t.clock.advance(31_000);
    assert.equal((await post(await logoutToken())).status, 200, 'the provider is asked again after the pause');
  });

  const foreignKey = (): JWK => {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    return privateKey.export({ format: 'jwk' }) as JWK;
  };
  /** Each refused token, answered 400 invalid_request, and no session ends. */
  const REFUSED: [string, () => Promise<string>, RegExp][] = [
    [
      'a foreign key under the published kid',
      () => logoutToken({}, { key: foreignKey(), kid: idp.currentKid() }),
      /signature/,
    ],
    [
      'a foreign key under its own kid',
      () => logoutToken({}, { key: { ...foreignKey(), kid: 'stranger' } }),
      /signature/,
    ],
    ['alg none', async () => new UnsecuredJWT({ ...(await decoded(await logoutToken())) }).encode(), /algorithms/],
    ['a wrong audience', () => logoutToken({ aud: 'someone-else' }), /audience/],
    ['a wrong issuer', () => logoutToken({ iss: 'https://evil.example' }), /issuer/],
    [
      'a stale iat',
      () => logoutToken({ iat: Math.floor(t.clock.now() / 1000) - 15 * 60, exp: undefined }),
      /too long ago/,
    ],
    ['an iat in the future', () => logoutToken({ iat: Math.floor(t.clock.now() / 1000) + 10 * 60 }), /in the future/],
    ['no iat', () => logoutToken({ iat: undefined }), /iat/],
    ['a nonce', () => logoutToken({ nonce: 'n-0123' }), /nonce/],
    ['no events', () => logoutToken({ events: undefined }), /event/],
    ['another event', () => logoutToken({ events: { 'https://example.com/other': {} } }), /event/],
    ['the event not an object', () => logoutToken({ events: { [BACKCHANNEL_LOGOUT_EVENT]: 'yes' } }), /event/],
    ['no sub and no sid', () => logoutToken({ sub: undefined }), /neither/],
    ['no jti', () => logoutToken({ jti: undefined }), /jti/],
    ['not a JWT', async () => 'not.a.jwt', /readable/],
    ['no token at all', async () => '', /logout_token/],
  ];
  const decoded = async (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

  test('refused tokens: foreign key, alg none, wrong aud or iss, stale iat, a nonce, no event... each 400, no session ends', async () => {
    const sso = await ssoClient();
    for (const [name, make, words] of REFUSED) {
      const res = await post(await make());
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.equal(res.headers.get('cache-control'), 'no-store', name);
      const body = JSON.parse(res.text);
      assert.equal(body.error, 'invalid_request', name);
      assert.match(body.error_description, words, name);
      assert.equal((await sessionRows()).length, 1, `${name}: no session ended`);
    }
    assert.equal(await signedIn(sso), true);
    const metrics = await (
      await t.app.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    assert.match(metrics, new RegExp(`svc_sso_backchannel_logouts_total\\{outcome="refused"\\} ${REFUSED.length}\\n`));
    assert.ok(
      t.logs.some((l) => l.includes('back-channel logout refused') && l.includes('"reason":"signature"')),
      'the refusal reason and provider are logged',
    );
  });

  test('a replayed token is refused, and so are tokens for a disabled or unknown provider; the body must be a form', async () => {
    const token = await logoutToken();
    const first = await post(token);
    assert.equal(first.status, 200);
    const sso = await ssoClient();
    const replay = await post(token);
    assert.equal(replay.status, 400);
    assert.match(JSON.parse(replay.text).error_description, /already accepted/);
    assert.equal(await signedIn(sso), true, 'a replay ends nothing');

    const asJson = await t.client().request('/login/sso/corp/backchannel-logout', {
      method: 'POST',
      body: JSON.stringify({ logout_token: await logoutToken() }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(asJson.status, 400);
    assert.equal(await signedIn(sso), true);

    assert.equal((await post(await logoutToken(), 'nowhere')).status, 400);
    await t.deps.db.updateTable('sso_providers').set({ enabled: 0 }).where('id', '=', corp.id).execute();
    const disabled = await post(await logoutToken());
    assert.equal(disabled.status, 400);
    assert.match(JSON.parse(disabled.text).error_description, /turned off/);
    assert.equal((await sessionRows()).length, 1, 'nothing ended for a disabled provider');

    const metrics = await (
      await t.app.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    assert.match(metrics, /svc_sso_backchannel_logouts_total\{outcome="accepted"\} 1\n/);
    assert.match(metrics, /svc_sso_backchannel_logouts_total\{outcome="refused"\} 4\n/);
    assert.match(metrics, /svc_sso_backchannel_sessions_ended_total 0\n/);
  });

  test('an accepted token is counted with the sessions it ended; its jti is kept only until the token would be refused as stale', async () => {
    await ssoClient();
    await ssoClient();
    assert.equal((await post(await logoutToken())).status, 200);
    const metrics = await (
      await t.app.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    assert.match(metrics, /svc_sso_backchannel_sessions_ended_total 2\n/);
    assert.equal(await pruneLogoutJtis(t.deps), 0, 'kept while the token could be replayed');
    t.clock.advance(6 * 60_000 + 1000);
    assert.equal(await pruneLogoutJtis(t.deps), 1);
  });
});

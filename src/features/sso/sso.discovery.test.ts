// Discovery is cached per provider for 5 minutes, a key rotation still signs in at once (and only a
// signature or key-id failure forces a discovery, at most one per provider every 30 s), sign-in starts are limited
// per (client address, provider), and control characters in the SSO routes' queries are refused.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
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
  CONFIDENTIAL_CLIENT_SECRET,
  PUBLIC_CLIENT_ID,
  startTestIdp,
  type TestIdp,
} from '../../../test/helpers/test-idp.ts';
import { DISCOVERY_TTL_MS, FORCED_REFRESH_INTERVAL_MS } from './sso.discovery.ts';
import { START_POLICY } from './sso.flow.service.ts';
import { changeProvider } from './sso.providers.service.ts';
import { CLI_ACTOR } from '../auth/admin-actor.ts';

let idp: TestIdp;
before(async () => {
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['pub']) });
});
after(async () => {
  await idp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let provider: { id: string; slug: string };
  let user: { id: string; username: string; password: string };
  let sub: string;

  beforeEach(async () => {
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
    const admin = await buildAccount(t, { role: 'admin' });
    provider = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    user = await buildAccount(t);
    sub = newSub();
    await t.deps.db
      .insertInto('sso_identities')
      .values({ id: `b-${sub}`, provider_id: provider.id, sub, account_id: user.id, label: sub, linked_at: 1 })
      .execute();
  });

  const jwksFetches = () => idp.requests.filter((r) => r.path === '/jwks').length;

  test('N starts and a whole sign-in make one discovery request; 5 minutes later the next start makes a new one', async () => {
    const before = idp.discoveryCount();
    for (let i = 0; i < 5; i++) assert.equal((await t.client().get('/login/sso/pub')).status, 303);
    assert.equal(idp.discoveryCount() - before, 1, 'five starts, one discovery');
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    assert.equal(idp.discoveryCount() - before, 1, 'the callback used the cached configuration too');

    t.clock.advance(DISCOVERY_TTL_MS - 1);
    assert.equal((await t.client().get('/login/sso/pub')).status, 303);
    assert.equal(idp.discoveryCount() - before, 1, 'still cached just before 5 minutes');
    t.clock.advance(1);
    assert.equal((await t.client().get('/login/sso/pub')).status, 303);
    assert.equal(idp.discoveryCount() - before, 2, 'asked again once 5 minutes passed');
  });

  test('an admin’s change of client settings is never served the cached configuration', async () => {
    const first = new URL((await t.client().get('/login/sso/pub')).location!);
    assert.notEqual(first.searchParams.get('client_id'), CONFIDENTIAL_CLIENT_ID);
    const before = idp.discoveryCount();
    await t.deps.db
      .updateTable('sso_providers')
      .set({ client_id: CONFIDENTIAL_CLIENT_ID, client_secret: CONFIDENTIAL_CLIENT_SECRET })
      .where('id', '=', provider.id)
      .execute();
    const second = new URL((await t.client().get('/login/sso/pub')).location!);
    assert.equal(second.searchParams.get('client_id'), CONFIDENTIAL_CLIENT_ID);
    assert.equal(idp.discoveryCount() - before, 1);
  });

  test('any admin save of the provider (even of its name only) drops the cached configuration and its keys', async () => {
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    const [discoveries, keyFetches] = [idp.discoveryCount(), jwksFetches()];
    t.clock.advance(1_000);
    const saved = await changeProvider(t.deps, CLI_ACTOR, {
      id: provider.id,
      display_name: 'Renamed',
      slug: 'pub',
      issuer: idp.issuer,
      client_id: PUBLIC_CLIENT_ID,
      enabled: true,
    });
    assert.equal(saved.ok, true);
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    assert.equal(idp.discoveryCount() - discoveries, 1, 'discovered afresh after the save');
    assert.equal(jwksFetches() - keyFetches, 1, 'and the keys fetched afresh');
  });

  test('a key rotation at the IdP: the next sign-in goes through at once (one fresh discovery and key fetch), and later ones use the cache', async () => {
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    const [discoveries, keyFetches] = [idp.discoveryCount(), jwksFetches()];
    await idp.rotateKeys();
    const res = await roundTrip(t.client(), idp, '/login/sso/pub', sub);
    assert.equal(res.status, 303, res.text.slice(0, 300));
    assert.equal(res.location, '/');
    assert.equal(idp.discoveryCount() - discoveries, 1, 'the failed verification was retried with a fresh discovery');
    assert.equal(jwksFetches() - keyFetches, 1, 'and the new keys fetched once');
    assert.equal(idp.tokenRequests.filter((r) => r.hadCodeVerifier).length > 0, true);
    assert.ok(t.logs.some((l) => l.includes('retrying with a fresh discovery')));

    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    assert.equal(idp.discoveryCount() - discoveries, 1, 'the fresh configuration is cached in turn');
  });

  test('the retry replays the token response: the single-use code goes to the IdP once', async () => {
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    await idp.rotateKeys();
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    const tokenPosts = idp.requests.filter((r) => r.path === '/token').length;
    assert.equal((await c.get(pathOf(callback))).location, '/');
    assert.equal(idp.requests.filter((r) => r.path === '/token').length - tokenPosts, 1);
  });

  test(`sign-in starts are limited per (address, provider) to ${START_POLICY.maxFailures} a minute: then a 429 page with no request to the IdP; other addresses and providers are not`, async () => {
    const from = (address: string) => {
      const c = t.client();
      c.address = address;
      return c;
    };
    assert.equal(START_POLICY.maxFailures, 60);
    const admin = await buildAccount(t, { role: 'admin' });
    await buildProvider(t, idp, { slug: 'other', createdBy: admin.id });
    for (let i = 0; i < START_POLICY.maxFailures; i++)
      assert.equal((await from('198.51.100.7').get('/login/sso/pub')).status, 303, `start ${i + 1}`);
    const seen = idp.requests.length;
    const refused = await from('198.51.100.7').get('/login/sso/pub');
    assert.equal(refused.status, 429);
    assert.match(refused.text, /Too many sign-in attempts/);
    assert.match(refused.text, /href="\/login"/);
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal(refused.location, undefined);
    assert.equal(idp.requests.length, seen, 'nothing was asked of the IdP');

    assert.equal(
      (await from('198.51.100.7').get('/login/sso/other')).status,
      303,
      'the same address at another provider',
    );
    assert.equal((await from('198.51.100.8').get('/login/sso/pub')).status, 303, 'another address’s first start');
    // Unknown slugs are answered from a read: no counter row per made-up slug.
    const rows = async () => (await t.deps.db.selectFrom('auth_throttle').select('key').execute()).length;
    const counters = await rows();
    for (let i = 0; i < 5; i++) assert.equal((await from('198.51.100.7').get(`/login/sso/nope-${i}`)).status, 404);
    assert.equal(await rows(), counters);
    t.clock.advance(START_POLICY.windowMs);
    assert.equal((await from('198.51.100.7').get('/login/sso/pub')).status, 303, 'a minute later');
  });

  test('IPv6 starts are limited by /64', async () => {
    const from = (address: string) => {
      const c = t.client();
      c.address = address;
      return c;
    };
    for (let i = 0; i < START_POLICY.maxFailures; i++)
      assert.equal((await from(`2001:db8:0:1::${i + 1}`).get('/login/sso/pub')).status, 303);
    assert.equal((await from('2001:db8:0:1::ffff').get('/login/sso/pub')).status, 429, 'same /64');
    assert.equal((await from('2001:db8:0:2::1').get('/login/sso/pub')).status, 303, 'next /64');
  });

  test('callbacks that fail before the token request (no code, a wrong iss) force no discovery, nor do their replays', async () => {
    assert.equal((await t.client().get('/login/sso/pub')).status, 303, 'a start caches the configuration');
    const [discoveries, tokenPosts] = [idp.discoveryCount(), idp.tokenRequests.length];
    // Each its own flow (the first callback of a flow spends it), then a replay of each with its flow cookie.
    for (let i = 0; i < 30; i++) {
      const c = t.client();
      const start = await c.get('/login/sso/pub');
      assert.equal(start.status, 303);
      const state = new URL(start.location!).searchParams.get('state')!;
      const flowCookie = c.cookies.get('svc_sso_flow')!;
      const query =
        i % 2 === 0 ? `state=${state}` : `state=${state}&code=x&iss=${encodeURIComponent('https://attacker.example')}`;
      assert.equal((await c.get(`/login/sso/pub/callback?${query}`)).status, 502, `callback ${i + 1}`);
      const x = t.client();
      x.cookies.set('svc_sso_flow', flowCookie);
      assert.equal(
        (await x.get(`/login/sso/pub/callback?${query}`)).status,
        400,
        `replay of callback ${i + 1}: already used`,
      );
    }
    assert.equal(idp.discoveryCount() - discoveries, 0, 'the cached configuration served every callback');
    assert.equal(idp.tokenRequests.length, tokenPosts, 'and no code went to the IdP');
    assert.ok(!t.logs.some((l) => l.includes('retrying with a fresh discovery')));
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/', 'sign-in still works');
    assert.equal(idp.discoveryCount() - discoveries, 0);
  });

  test(`signature failures force at most one discovery per provider every ${FORCED_REFRESH_INTERVAL_MS / 1000} s; within it, a rotation says try again`, async () => {
    assert.equal(FORCED_REFRESH_INTERVAL_MS, 30_000);
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    const discoveries = idp.discoveryCount();
    const foreignSigned = async () => {
      const c = t.client();
      const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
      idp.tamperNextIdToken((claims) => ({ claims, signWith: 'foreign' }));
      return (await c.get(pathOf(callback))).status;
    };
    for (let i = 0; i < 5; i++) assert.equal(await foreignSigned(), 502);
    assert.equal(idp.discoveryCount() - discoveries, 1, 'five signature failures, one forced discovery');

    // A real rotation within the interval: refused with "try again", no discovery; once it has passed, signed in.
    await idp.rotateKeys();
    const res = await roundTrip(t.client(), idp, '/login/sso/pub', sub);
    assert.equal(res.status, 503);
    assert.match(res.text, /try again/);
    assert.equal(idp.discoveryCount() - discoveries, 1);
    t.clock.advance(FORCED_REFRESH_INTERVAL_MS);
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    assert.equal(idp.discoveryCount() - discoveries, 2, 'the next forced discovery');
  });

  test('control characters in any SSO route’s query are refused with a 400 page before the IdP sees anything', async () => {
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    const tokenPosts = idp.tokenRequests.length;
    for (const name of ['code', 'state', 'iss']) {
      const bad = new URL(callback);
      bad.searchParams.set(name, `${bad.searchParams.get(name)}\u0000`);
      const res = await c.get(pathOf(bad));
      assert.equal(res.status, 400, name);
      assert.match(res.text, /control characters/, name);
    }
    const refused = async (client: typeof c, path: string) => {
      const res = await client.get(path);
      assert.equal(res.status, 400, path);
      assert.match(res.text, /control characters/, path);
    };
    await refused(c, '/login/sso/pub/callback?error=access%00denied&state=x');
    await refused(c, '/login/sso/pub/callback?co%01de=x');
    await refused(c, '/login/sso/pub?next=%1b');
    assert.equal(idp.tokenRequests.length, tokenPosts, 'no code was sent to the IdP');
    assert.equal(await t.deps.db.selectFrom('sessions').select('id_hash').executeTakeFirst(), undefined);

    const alice = await buildAccount(t);
    const signedIn = await signIn(t, alice);
    await refused(signedIn, '/profile/sso/pub/link?x=%00');
    await refused(signedIn, '/profile/sso/pub/link/callback?code=%00&state=%7f');
    // Tab is text, not a control character to refuse: this callback fails only for want of a flow cookie.
    assert.match(
      (await t.client().get('/login/sso/pub/callback?error_description=a%09b')).text,
      /expired or was already used/,
    );
    // A refused callback still has the provider's code in its URL: its page sends only the origin as a Referer.
    for (const [client, path] of [
      [t.client(), '/login/sso/pub/callback?code=unspent&state=s'],
      [signedIn, '/profile/sso/pub/link/callback?code=unspent&state=s'],
    ] as const) {
      const res = await client.get(path);
      assert.ok(res.status >= 400, path);
      assert.equal(res.headers.get('referrer-policy'), 'strict-origin', path);
    }
  });
});

// Every check on the provider's answer, each shown to refuse: state, replay, nonce, signature, issuer, audience,
// expiry, keys.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';
import {
  buildProvider,
  clearSsoState,
  newSub,
  pathOf,
  redirectUrisFor,
  roundTrip,
  startAndAuthorize,
} from '../../../test/helpers/sso.ts';
import { PUBLIC_CLIENT_ID, startTestIdp, type IdTokenTamper, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { openDatabase } from '../../db/connect.ts';
import { FLOW_TTL_MS } from './sso.flow.service.ts';

let idp: TestIdp;
before(async () => {
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['pub']) });
});
after(async () => {
  await idp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let user: { id: string; username: string };
  let sub: string;

  beforeEach(async () => {
    const db = getDb().db;
    await clearSsoState(db);
    await db.deleteFrom('sso_spent_states').execute();
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
    const admin = await buildAccount(t, { role: 'admin' });
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    user = await buildAccount(t);
    sub = newSub();
    await t.deps.db
      .insertInto('sso_identities')
      .values({ id: `b-${sub}`, provider_id: p.id, sub, account_id: user.id, label: sub, linked_at: 1 })
      .execute();
  });

  const sessions = async () => (await t.deps.db.selectFrom('sessions').select('id_hash').execute()).length;

  /** A callback refused with `status` and `message`, and no session issued. */
  async function assertRefused(c: TestClient, callback: URL | string, status: number, message: RegExp) {
    const res = await c.get(typeof callback === 'string' ? callback : pathOf(callback));
    assert.equal(res.status, status, res.text.slice(0, 400));
    assert.match(res.text, message);
    assert.equal(res.location, undefined);
    assert.equal(await sessions(), 0);
    return res;
  }

  /** Signs in with the IdP rewriting the id_token on its way out. */
  async function tampered(fn: IdTokenTamper) {
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    idp.tamperNextIdToken(fn);
    return { c, callback };
  }

  test('control: an id_token re-signed with the published key and unchanged claims is accepted', async () => {
    const { c, callback } = await tampered((claims) => ({ claims }));
    const res = await c.get(pathOf(callback));
    assert.equal(res.location, '/');
  });

  test('a wrong state is refused', async () => {
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    callback.searchParams.set('state', 'A'.repeat(43));
    await assertRefused(c, callback, 400, /does not belong to the sign-in this browser started/);
  });

  test('a callback without the flow cookie (another browser, or already used) is refused', async () => {
    const callback = await startAndAuthorize(t.client(), idp, '/login/sso/pub', sub);
    await assertRefused(t.client(), callback, 400, /expired or was already used/);
  });

  test('a replayed callback is refused, with or without the original flow cookie, before the provider is asked again', async () => {
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    const flowCookie = c.cookies.get('svc_sso_flow')!;
    assert.equal((await c.get(pathOf(callback))).location, '/');
    await t.deps.db.deleteFrom('sessions').execute();
    await assertRefused(c, callback, 400, /expired or was already used/);
    const exchanged = idp.tokenRequests.length;
    const attacker = t.client();
    attacker.cookies.set('svc_sso_flow', flowCookie);
    // Spent in the database: refused here, so a provider that would exchange the same code twice never gets the chance.
    await assertRefused(attacker, callback, 400, /was already used to finish a sign-in, so it cannot be used again/);
    assert.equal(idp.tokenRequests.length, exchanged, 'the code was not sent to the provider again');
    assert.ok(t.logs.some((l) => l.includes('a callback of a flow already used was replayed')));
    const stored = await t.deps.db.selectFrom('sso_spent_states').selectAll().execute();
    assert.equal(stored.length, 1);
    assert.match(stored[0]!.state_hash, /^[0-9a-f]{64}$/, 'the state is kept as its SHA-256 only');
    assert.ok(!callback.search.includes(stored[0]!.state_hash));
    assert.equal(Number(stored[0]!.expires_at), t.clock.now() + FLOW_TTL_MS, 'kept for the flow’s lifetime');
  });

  test('a callback replayed with its cookie on another instance over the same database is refused there too', async () => {
    const second = await openDatabase(getDb().database, { create: false });
    try {
      const other = buildTestApp({ ...getDb(), db: second.db, dialect: second.dialect }, { oidcCaFile: idp.caFile });
      const c = t.client();
      const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
      const flowCookie = c.cookies.get('svc_sso_flow')!;
      assert.equal((await c.get(pathOf(callback))).location, '/');
      await t.deps.db.deleteFrom('sessions').execute();
      const exchanged = idp.tokenRequests.length;
      const attacker = other.client();
      attacker.cookies.set('svc_sso_flow', flowCookie);
      const res = await attacker.get(pathOf(callback));
      assert.equal(res.status, 400, res.text.slice(0, 300));
      assert.match(res.text, /was already used to finish a sign-in/);
      assert.equal(await sessions(), 0);
      assert.equal(idp.tokenRequests.length, exchanged);
    } finally {
      await second.db.destroy();
    }
  });

  test('housekeeping deletes the spent states of expired flows only', async () => {
    const c = t.client();
    assert.equal((await roundTrip(c, idp, '/login/sso/pub', sub)).location, '/');
    t.clock.advance(FLOW_TTL_MS / 2);
    await t.deps.db.deleteFrom('sessions').execute();
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    assert.equal((await t.deps.db.selectFrom('sso_spent_states').select('state_hash').execute()).length, 2);
    t.clock.advance(FLOW_TTL_MS / 2);
    await housekeepOnce(t.deps);
    assert.equal(
      (await t.deps.db.selectFrom('sso_spent_states').select('state_hash').execute()).length,
      1,
      'the first flow has expired',
    );
    t.clock.advance(FLOW_TTL_MS / 2);
    await housekeepOnce(t.deps);
    assert.deepEqual(await t.deps.db.selectFrom('sso_spent_states').select('state_hash').execute(), []);
  });

  test('a forged or expired flow cookie is refused', async () => {
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    const cookie = c.cookies.get('svc_sso_flow')!;
    const forged = t.client();
    forged.cookies.set('svc_sso_flow', cookie.replace(/^[^.]{4}/, 'AAAA'));
    await assertRefused(forged, callback, 400, /expired or was already used/);
    t.clock.advance(FLOW_TTL_MS + 1);
    await assertRefused(c, callback, 400, /expired or was already used/);
  });

  test('a wrong nonce is refused', async () => {
    const { c, callback } = await tampered((claims) => ({ claims: { ...claims, nonce: 'some-other-login' } }));
    await assertRefused(c, callback, 502, /could not be verified/);
    assert.ok(t.logs.some((l) => l.includes('"reason":"token-invalid"') && l.includes('nonce')));
  });

  test('an id_token signed by a foreign key (same kid, valid claims) is refused: the signature is checked', async () => {
    const { c, callback } = await tampered((claims) => ({ claims, signWith: 'foreign' }));
    await assertRefused(c, callback, 502, /could not be verified/);
    assert.ok(
      t.logs.some((l) => l.includes('"reason":"token-invalid"') && l.includes('JWT signature verification failed')),
    );
  });

  test('a wrong issuer in the id_token is refused', async () => {
    const { c, callback } = await tampered((claims) => ({ claims: { ...claims, iss: 'https://127.0.0.1:1' } }));
    await assertRefused(c, callback, 502, /could not be verified/);
  });

  test('RFC 9207: a wrong or missing iss in the callback is refused', async () => {
    const c = t.client();
    const callback = await startAndAuthorize(c, idp, '/login/sso/pub', sub);
    callback.searchParams.set('iss', 'https://attacker.example');
    await assertRefused(c, callback, 502, /could not be verified/);
    const c2 = t.client();
    const callback2 = await startAndAuthorize(c2, idp, '/login/sso/pub', sub);
    callback2.searchParams.delete('iss');
    await assertRefused(c2, callback2, 502, /could not be verified/);
  });

  test('a wrong audience is refused; several audiences need azp naming this client', async () => {
    const cases: IdTokenTamper[] = [
      (claims) => ({ claims: { ...claims, aud: 'another-client' } }),
      (claims) => ({ claims: { ...claims, aud: [PUBLIC_CLIENT_ID, 'another-client'] } }),
      (claims) => ({ claims: { ...claims, aud: [PUBLIC_CLIENT_ID, 'another-client'], azp: 'another-client' } }),
    ];
    for (const fn of cases) {
      const { c, callback } = await tampered(fn);
      await assertRefused(c, callback, 502, /could not be verified/);
    }
    const { c, callback } = await tampered((claims) => ({
      claims: { ...claims, aud: [PUBLIC_CLIENT_ID, 'another-client'], azp: PUBLIC_CLIENT_ID },
    }));
    assert.equal((await c.get(pathOf(callback))).location, '/');
  });

  test('an expired id_token is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { c, callback } = await tampered((claims) => ({ claims: { ...claims, iat: now - 7200, exp: now - 3600 } }));
    await assertRefused(c, callback, 502, /could not be verified/);
  });

  test('key rotation: the next sign-in verifies against the new key; an unpublished kid says try again, never a 500', async () => {
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    const oldKid = idp.currentKid();
    await idp.rotateKeys();
    assert.notEqual(idp.currentKid(), oldKid);
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
    await t.deps.db.deleteFrom('sessions').execute();

    const { c, callback } = await tampered((claims) => ({ claims, kid: 'not-published-yet' }));
    await assertRefused(c, callback, 503, /try again/);
    assert.equal((await roundTrip(t.client(), idp, '/login/sso/pub', sub)).location, '/');
  });

  test('no token, code or secret reaches the log', async () => {
    const { c, callback } = await tampered((claims) => ({ claims, signWith: 'foreign' }));
    await c.get(pathOf(callback));
    await roundTrip(t.client(), idp, '/login/sso/pub', sub);
    const code = callback.searchParams.get('code')!;
    for (const line of t.logs) {
      assert.ok(!line.includes('eyJ'), 'no JWT in the log');
      assert.ok(!line.includes(code), 'no authorization code in the log');
    }
  });
});

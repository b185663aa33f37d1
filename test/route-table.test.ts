// Every registered route against the gate's default: a state-changing route outside the self-service list is closed to
// a signed-in viewer, including ones not built yet (admin acts outside /settings, such as POST /probers).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApi } from '../src/api.ts';
import { createToken } from '../src/features/tokens/tokens.service.ts';
import { buildTestApp, type TestApp } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { signedInAs } from './helpers/factories.ts';

/**
 * Writes a viewer may make: sign-in steps (public or pending), sign-out, Profile and its sections, read marks; and an
 * identity provider's back-channel logout (public: its signed token is the credential).
 */
const SELF_SERVICE = [
  'POST /login/sso/x/backchannel-logout',
  'POST /setup',
  'POST /invite',
  'POST /reset',
  'POST /login',
  'POST /login/passkey',
  'POST /login/passkey/options',
  'POST /login/totp',
  'POST /login/totp/passkey',
  'POST /login/totp/passkey/options',
  'POST /login/enrol',
  'POST /logout',
  'POST /messages/read',
  'POST /messages/read-all',
  'POST /messages/unread',
  'POST /profile/passkeys/add',
  'POST /profile/passkeys/options',
  'POST /profile/passkeys/remove',
  'POST /profile/passkeys/rename',
  'POST /profile/password',
  'POST /profile/reauth',
  'POST /profile/recovery-codes',
  'POST /profile/recovery-codes/download',
  'POST /profile/sessions/end',
  'POST /profile/sso/unlink',
  'POST /profile/tokens',
  'POST /profile/tokens/revoke',
  'POST /profile/totp/confirm',
  'POST /profile/totp/start',
];

/** API writes a viewer's token may make: read marks and revoking its own tokens. */
const API_SELF_SERVICE = [
  'POST /api/messages/read',
  'POST /api/messages/read-all',
  'POST /api/messages/unread',
  'DELETE /api/tokens/x',
];

/**
 * Admin acts with no route in this service: the gate must refuse them before any route exists (404 would mean open).
 */
const UNBUILT_ADMIN_ACTS = [
  'POST /probers',
  'POST /scans/trigger',
  'POST /anything-added-later',
  'PUT /profilex',
  'DELETE /messages',
];

/** Every registered route that is not a read (GET/HEAD) nor middleware, as "METHOD /path" with parameters filled in. */
function registeredWrites(t: TestApp): string[] {
  const writes = [...t.app.routes, ...createApi(t.deps).routes]
    .filter((r) => r.method !== 'GET' && r.method !== 'HEAD' && r.method !== 'ALL' && !r.path.includes('*'))
    .map(
      (r) =>
        `${r.method} ${r.path
          .split('/')
          .map((s) => (s.startsWith(':') ? 'x' : s))
          .join('/')}`,
    );
  return [...new Set(writes)].sort();
}

/** Sends `METHOD /path` as a signed-in viewer's browser would (same origin, the session's form token). */
function asViewer(client: Awaited<ReturnType<typeof signedInAs>>['client'], route: string) {
  const [method, path] = route.split(' ') as [string, string];
  if (method === 'POST') return client.post(path, {});
  return client.request(path, {
    method,
    body: `_csrf=${client.csrf}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
  });
}

forEachDialect((getDb) => {
  test('every registered write outside the self-service list is 403 for a viewer', async () => {
    const t = buildTestApp(getDb());
    const writes = registeredWrites(t).filter((r) => !r.split(' ')[1]!.startsWith('/api/'));
    const admin = writes.filter((r) => !SELF_SERVICE.includes(r));
    assert.ok(admin.length >= 10, `found ${admin.length} admin writes`);
    for (const route of SELF_SERVICE) assert.ok(writes.includes(route), `${route} is a registered route`);
    const { client } = await signedInAs(t, 'viewer');
    for (const route of admin) {
      const res = await asViewer(client, route);
      assert.equal(res.status, 403, `${route} as viewer`);
    }
    assert.equal((await client.get('/')).status, 200, 'the viewer is still signed in');
  });

  test('each self-service write is reachable by a viewer', async () => {
    const t = buildTestApp(getDb());
    for (const route of SELF_SERVICE) {
      // A fresh session each: sign-out and the sign-in steps change the session they run on.
      const { client } = await signedInAs(t, 'viewer');
      const res = await asViewer(client, route);
      assert.notEqual(res.status, 403, `${route} as viewer: ${res.text.slice(0, 200)}`);
    }
  });

  test('unbuilt admin acts are 403 for a viewer, not 404', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'viewer');
    for (const route of UNBUILT_ADMIN_ACTS) {
      const res = await asViewer(client, route);
      assert.equal(res.status, 403, `${route} as viewer`);
      assert.match(res.text, /for administrators/, `${route}: the gate's refusal`);
    }
    const { client: adminClient } = await signedInAs(t, 'admin');
    assert.equal(
      (await asViewer(adminClient, 'POST /scans/trigger')).status,
      404,
      'an admin passes the gate to the missing route',
    );
  });

  test('every registered API write outside the self-service list is 403 for a viewer’s token; the self-service ones pass the gate', async () => {
    const t = buildTestApp(getDb());
    const writes = registeredWrites(t).filter((r) => r.split(' ')[1]!.startsWith('/api/'));
    const admin = writes.filter((r) => !API_SELF_SERVICE.includes(r));
    for (const route of API_SELF_SERVICE) assert.ok(writes.includes(route), `${route} is a registered route`);
    const { account } = await signedInAs(t, 'viewer');
    const { token } = await createToken(t.deps, account.id, { name: 'ci', expiry: '90' });
    const send = (route: string) => {
      const [method, path] = route.split(' ') as [string, string];
      return t.app.request(path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
    };
    for (const route of admin) assert.equal((await send(route)).status, 403, `${route} with a viewer's token`);
    for (const route of API_SELF_SERVICE)
      assert.notEqual((await send(route)).status, 403, `${route} with a viewer's token`);
  });

  test('a viewer token is refused on API writes by default', async () => {
    const t = buildTestApp(getDb());
    const { account } = await signedInAs(t, 'viewer');
    const { token } = await createToken(t.deps, account.id, { name: 'ci', expiry: '90' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const read = await t.app.request('/api/me', { headers });
    assert.equal(read.status, 200);
    const write = await t.app.request('/api/scans/trigger', { method: 'POST', headers, body: '{}' });
    assert.equal(write.status, 403);
  });
});

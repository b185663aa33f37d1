// Enumerates every registered route and checks the gate: anonymous -> /login (401 on /api), viewer -> 403 on admin routes
// (/settings, and every write outside the self-service list; test/route-table.test.ts holds that list).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { signedInAs } from '../../test/helpers/factories.ts';
import { accessFor } from './gate.ts';

forEachDialect((getDb) => {
  test('every registered route is gated by its path', async () => {
    const t = buildTestApp(getDb());
    const routes = t.app.routes
      .filter((r) => (r.method === 'GET' || r.method === 'POST') && r.path !== '*' && !r.path.endsWith('/*'))
      .map((r) => ({ method: r.method, path: r.path.replace(/:[A-Za-z_]+/g, 'x') }));
    const unique = [...new Map(routes.map((r) => [`${r.method} ${r.path}`, r])).values()];
    assert.ok(unique.length >= 8, `found ${unique.length} routes`);
    const { client: viewer } = await signedInAs(t, 'viewer');
    let adminRoutes = 0;

    for (const { method, path } of unique) {
      const access = accessFor(method, path);
      const anon = t.client();
      const res = method === 'GET' ? await anon.get(path) : await anon.post(path, {});
      if (access === 'api') assert.equal(res.status, 401, `${method} ${path} anonymous`);
      else if (access !== 'public') {
        assert.equal(res.status, 303, `${method} ${path} anonymous`);
        assert.equal(res.location, '/login', `${method} ${path} anonymous`);
      }
      if (access === 'admin') {
        adminRoutes++;
        const v = method === 'GET' ? await viewer.get(path) : await viewer.post(path, {});
        assert.equal(v.status, 403, `${method} ${path} as viewer`);
      }
    }
    assert.ok(adminRoutes >= 1, 'the settings routes are admin routes');
  });

  test('the gate table classifies requests by method and path', () => {
    assert.equal(accessFor('GET', '/settings'), 'admin');
    assert.equal(accessFor('POST', '/settings/accounts/role'), 'admin');
    assert.equal(accessFor('GET', '/settingsx'), 'user');
    assert.equal(accessFor('GET', '/login'), 'public');
    assert.equal(accessFor('POST', '/login'), 'public');
    assert.equal(accessFor('GET', '/login/sso/acme/callback'), 'public');
    assert.equal(accessFor('GET', '/login/totp'), 'pending');
    assert.equal(accessFor('POST', '/logout'), 'pending');
    assert.equal(accessFor('GET', '/api/me'), 'api');
    assert.equal(accessFor('GET', '/profile'), 'user');
    assert.equal(accessFor('POST', '/profile/password'), 'user');
    assert.equal(accessFor('POST', '/messages/read'), 'user');
    assert.equal(accessFor('GET', '/anything-new'), 'user');
    assert.equal(accessFor('HEAD', '/anything-new'), 'user');
    // Issue 21 item 5: a write outside the self-service list is admin-only, whether or not a route exists yet.
    assert.equal(accessFor('POST', '/anything-new'), 'admin');
    assert.equal(accessFor('DELETE', '/profilex'), 'admin');
    assert.equal(accessFor('post', '/messages/read-all/x'), 'admin');
    assert.equal(accessFor('POST', '/api/anything-new'), 'api-admin');
    // The JSON API: the document is public to read only; the Settings resources are admin-only, reads included; read
    // marks and one's own tokens are self-service.
    assert.equal(accessFor('GET', '/api/openapi.json'), 'public');
    assert.equal(accessFor('HEAD', '/api/openapi.json'), 'public');
    assert.equal(accessFor('POST', '/api/openapi.json'), 'api-admin');
    for (const path of ['/api/channels', '/api/deliveries/x', '/api/accounts/x', '/api/invitations', '/api/sso/providers', '/api/settings/retention']) {
      assert.equal(accessFor('GET', path), 'api-admin', path);
    }
    assert.equal(accessFor('GET', '/api/channelsx'), 'api');
    assert.equal(accessFor('GET', '/api/messages'), 'api');
    assert.equal(accessFor('POST', '/api/messages'), 'api-admin');
    assert.equal(accessFor('POST', '/api/messages/read'), 'api');
    assert.equal(accessFor('DELETE', '/api/tokens/x'), 'api');
    // SPEC 4.2 names these admin acts outside /settings (not built in this service).
    for (const path of ['/probers', '/scans/trigger']) assert.equal(accessFor('POST', path), 'admin', path);
  });
});

// Enumerates every registered route, the JSON API's too, and checks the gate: anonymous -> /login (401 on /api), viewer
// ->
// 403 on admin routes (/settings, and every write outside the self-service list; test/route-table.test.ts holds that
// list) and a viewer's token -> 403 on the API's admin resources.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { signedInAs } from '../../test/helpers/factories.ts';
import { buildApiUser } from '../../test/helpers/api.ts';
import { createApi } from '../api.ts';
import { accessFor, isServerPost } from './gate.ts';

forEachDialect((getDb) => {
  test("every registered route is gated by its path, the JSON API's included", async () => {
    const t = buildTestApp(getDb());
    // The API is built lazily behind one catch-all route: its own routes are listed by the app it builds.
    const registered = [...t.app.routes, ...createApi(t.deps).routes].filter(
      (r) => r.method !== 'ALL' && r.path !== '*' && !r.path.endsWith('/*'),
    );
    const routes = registered.map((r) => ({
      method: r.method,
      path: r.path.replace(/:[A-Za-z_]+(\{[^}]*\}+)?/g, 'x'),
    }));
    const unique = [...new Map(routes.map((r) => [`${r.method} ${r.path}`, r])).values()];
    const { client: viewer } = await signedInAs(t, 'viewer');
    const viewerToken = await buildApiUser(t, 'viewer');
    const send = (method: string, path: string, token?: string) =>
      t.app.request(`http://localhost${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
    const seen = new Map<string, number>();

    for (const { method, path } of unique) {
      const access = accessFor(method, path);
      seen.set(access, (seen.get(access) ?? 0) + 1);
      if (access === 'api' || access === 'api-admin') {
        assert.equal((await send(method, path)).status, 401, `${method} ${path} without a token`);
        if (access === 'api-admin')
          assert.equal(
            (await send(method, path, viewerToken.token)).status,
            403,
            `${method} ${path} with a viewer's token`,
          );
        continue;
      }
      const anon = t.client();
      const res = method === 'GET' ? await anon.get(path) : await anon.post(path, {});
      if (access !== 'public') {
        assert.equal(res.status, 303, `${method} ${path} anonymous`);
        assert.equal(res.location, '/login', `${method} ${path} anonymous`);
      }
      if (access === 'admin') {
        const v = method === 'GET' ? await viewer.get(path) : await viewer.post(path, {});
        assert.equal(v.status, 403, `${method} ${path} as viewer`);
      }
    }
    // Every class of the table was met, so no branch above went unused.
    for (const access of ['public', 'pending', 'user', 'admin', 'api', 'api-admin'])
      assert.ok((seen.get(access) ?? 0) >= 1, `a ${access} route was checked`);
  });

  test('only an identity provider’s back-channel logout post is a server-to-server post, which skips the form checks', () => {
    assert.equal(isServerPost('POST', '/login/sso/acme/backchannel-logout'), true);
    for (const [method, path] of [
      ['GET', '/login/sso/acme/backchannel-logout'],
      ['POST', '/login/sso/acme/backchannel-logout/x'],
      ['POST', '/login/sso/backchannel-logout'],
      ['POST', '/login/sso/a/b/backchannel-logout'],
      ['POST', '/logout'],
      ['POST', '/profile/sso/unlink'],
    ] as const)
      assert.equal(isServerPost(method, path), false, `${method} ${path}`);
  });

  test('the gate table classifies requests by method and path', () => {
    assert.equal(accessFor('GET', '/settings'), 'admin');
    assert.equal(accessFor('POST', '/settings/accounts/role'), 'admin');
    assert.equal(accessFor('GET', '/settingsx'), 'user');
    assert.equal(accessFor('GET', '/login'), 'public');
    assert.equal(accessFor('POST', '/login'), 'public');
    assert.equal(accessFor('GET', '/login/sso/acme/callback'), 'public');
    assert.equal(accessFor('POST', '/login/sso/acme/backchannel-logout'), 'public');
    assert.equal(accessFor('GET', '/login/sso/acme/sign-out'), 'public');
    assert.equal(accessFor('GET', '/login/totp'), 'pending');
    assert.equal(accessFor('POST', '/logout'), 'pending');
    // A passkey sign-in is a sign-in; the passkey answering the second-factor step is part of that step.
    assert.equal(accessFor('POST', '/login/passkey/options'), 'public');
    assert.equal(accessFor('POST', '/login/passkey'), 'public');
    assert.equal(accessFor('POST', '/login/passkey/x'), 'admin');
    assert.equal(accessFor('POST', '/login/totp/passkey/options'), 'pending');
    assert.equal(accessFor('POST', '/login/totp/passkey'), 'pending');
    assert.equal(accessFor('POST', '/profile/passkeys/add'), 'user');
    assert.equal(accessFor('GET', '/api/me'), 'api');
    assert.equal(accessFor('GET', '/profile'), 'user');
    assert.equal(accessFor('POST', '/profile/password'), 'user');
    assert.equal(accessFor('POST', '/messages/read'), 'user');
    assert.equal(accessFor('GET', '/anything-new'), 'user');
    assert.equal(accessFor('HEAD', '/anything-new'), 'user');
    // A write outside the self-service list is admin-only, whether or not a route exists yet.
    assert.equal(accessFor('POST', '/anything-new'), 'admin');
    assert.equal(accessFor('DELETE', '/profilex'), 'admin');
    assert.equal(accessFor('post', '/messages/read-all/x'), 'admin');
    assert.equal(accessFor('POST', '/api/anything-new'), 'api-admin');
    // The JSON API: the document is public to read only; the Settings resources are admin-only, reads included; read
    // marks and one's own tokens are self-service.
    assert.equal(accessFor('GET', '/api/openapi.json'), 'public');
    assert.equal(accessFor('HEAD', '/api/openapi.json'), 'public');
    assert.equal(accessFor('POST', '/api/openapi.json'), 'api-admin');
    for (const path of [
      '/api/channels',
      '/api/deliveries/x',
      '/api/accounts/x',
      '/api/invitations',
      '/api/sso/providers',
      '/api/settings/retention',
    ]) {
      assert.equal(accessFor('GET', path), 'api-admin', path);
    }
    assert.equal(accessFor('GET', '/api/channelsx'), 'api');
    assert.equal(accessFor('GET', '/api/messages'), 'api');
    assert.equal(accessFor('POST', '/api/messages'), 'api-admin');
    assert.equal(accessFor('POST', '/api/messages/read'), 'api');
    assert.equal(accessFor('DELETE', '/api/tokens/x'), 'api');
    // Admin acts outside /settings, such as these (not built in this service), are admin-only without being listed.
    for (const path of ['/probers', '/scans/trigger']) assert.equal(accessFor('POST', path), 'admin', path);
  });
});

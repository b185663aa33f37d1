// Requests a client should never send, answered as the client's mistake (4xx problems), never a 5xx: deep or empty
// bodies, forged cursors, unpaired surrogates, writes to the public document; and the bad-token throttle never locks
// out a valid token from the same address. (Found by a security review of the API.)
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.ts';
import { ApiClient, assertProblem, buildApiUser } from './helpers/api.ts';
import { forEachDialect } from './helpers/db.ts';

const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp(getDb());
  });

  const noErrorsLogged = () =>
    assert.deepEqual(
      t.logs.filter((l) => l.includes('"level":50')),
      [],
    );

  test('a deeply nested body is a 422, and the public document takes no writes (401 before its body is read)', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      assertProblem(
        await new ApiClient(t, undefined).request(method, '/api/openapi.json', undefined, {
          raw: deep,
          headers: { 'content-type': 'application/json' },
        }),
        401,
        'unauthorized',
      );
    }
    const { api } = await buildApiUser(t, 'viewer');
    const res = await api.request('POST', '/api/messages/read', undefined, {
      raw: `{"ids":${deep}}`,
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(res, 422, 'invalid');
    assert.match(res.body.errors[0].detail, /nested more than 32 levels/);
    noErrorsLogged();
  });

  test('an empty body is 400 where JSON is declared and 415 where another type is, on every kind of route', async () => {
    const viewer = (await buildApiUser(t, 'viewer')).api;
    const admin = (await buildApiUser(t, 'admin')).api;
    const cases: [ApiClient, string, string, string, number][] = [
      [viewer, 'POST', '/api/messages/read', 'application/json', 400],
      [viewer, 'POST', '/api/messages/read-all', 'application/json', 400],
      [viewer, 'POST', '/api/messages/read-all', 'text/plain', 415],
      [admin, 'POST', '/api/channels', 'application/json', 400],
      [admin, 'PUT', '/api/settings/retention', 'application/x-www-form-urlencoded', 415],
    ];
    for (const [api, method, path, type, status] of cases) {
      assertProblem(await api.request(method, path, undefined, { raw: '', headers: { 'content-type': type } }), status);
    }
    // No body and no type at all: the route's own validation speaks.
    assert.equal((await viewer.request('POST', '/api/messages/read-all')).status, 204);
    noErrorsLogged();
  });

  test('a forged list cursor is a 422 on every paged list, whatever it holds', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const forged: [string, unknown[]][] = [
      ['/api/channels', [1.5, 'x']],
      ['/api/channels', [1e300, 'x']],
      ['/api/channels', [1, 'a\u0000b']],
      ['/api/deliveries', ['message', 1.5, 'm', 'd']],
      ['/api/deliveries?state=dead', ['changed', 1e300, 'd']],
      ['/api/deliveries?state=pending', ['due', 1, 'a\u0000b']],
      ['/api/messages', [1.5, 'x']],
      ['/api/accounts', [1e300, 'x']],
      ['/api/invitations', [1, 'a\u0000b']],
      ['/api/sso/identities', [-1e300, 'x']],
    ];
    for (const [path, values] of forged) {
      const res = await api.get(`${path}${path.includes('?') ? '&' : '?'}cursor=${cursor(values)}`);
      assertProblem(res, 422, 'invalid');
      assert.equal(res.body.errors[0].field, 'cursor', `${path} ${JSON.stringify(values)}`);
    }
    noErrorsLogged();
  });

  // (A query string cannot carry one: invalid UTF-8 in a URL decodes to U+FFFD.)
  test('an unpaired surrogate in a body string is a 422 naming the field, so no secret is stored altered', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const res = await api.request('POST', '/api/channels', undefined, {
      raw: '{"url":"https://hooks.example.com/x","classes":["drift"],"secret":"abc\\ud800def"}',
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(res, 422, 'invalid');
    assert.deepEqual(
      res.body.errors.map((e: any) => `${e.in}:${e.field}`),
      ['body:secret'],
    );
    assert.equal((await t.deps.db.selectFrom('channels').select('id').execute()).length, 0);
  });

  test('bad tokens from a neighbour (same IPv6 /64, or one NAT address) never lock out a valid token', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const guesser = new ApiClient(t, `svc_pat_${'A'.repeat(43)}`);
    for (let i = 0; i < 30; i++) await guesser.get('/api/me', { address: '2001:db8:1:2::bad' });
    assertProblem(await guesser.get('/api/me', { address: '2001:db8:1:2::bad' }), 429, 'too-many-bad-tokens');
    assert.equal((await api.get('/api/me', { address: '2001:db8:1:2::600d' })).status, 200);
    assert.equal(
      (await api.get('/api/me', { address: '2001:db8:1:2::bad' })).status,
      200,
      'not even from the guessing address',
    );
  });
});

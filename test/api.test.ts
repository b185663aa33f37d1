// What every /api/ request meets before any resource: bearer tokens only, problem details for every refusal, read-only
// tokens, the JSON-only body rule, 404/405, the body limit, the bad-token throttle, and the caller's own tokens.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.ts';
import { ApiClient, assertProblem, buildApiUser } from './helpers/api.ts';
import { forEachDialect } from './helpers/db.ts';
import { signedInAs } from './helpers/factories.ts';
import { sha256 } from '../src/deps.ts';
import { createToken } from '../src/features/tokens/tokens.service.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(() => {
    t = buildTestApp(getDb());
  });

  test('without a usable token every /api/ path answers 401 as a problem with WWW-Authenticate, never a redirect', async () => {
    const { token } = await buildApiUser(t, 'admin');
    const cases: [string, string | undefined, Record<string, string>][] = [
      ['no header', undefined, {}],
      ['unknown token', `svc_pat_${'A'.repeat(43)}`, {}],
      ['malformed token', `${token}x`, {}],
      ['basic scheme', undefined, { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` }],
    ];
    for (const [name, presented, headers] of cases) {
      for (const path of ['/api/me', '/api/tokens', '/api/nowhere']) {
        const res = await new ApiClient(t, presented).get(path, { headers });
        assertProblem(res, 401, 'unauthorized');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="svc"$/, `${name} ${path}`);
      }
    }
  });

  test('a signed-in browser session opens nothing under /api/ (cookies never count, so there is no CSRF surface)', async () => {
    const { client } = await signedInAs(t, 'admin');
    const res = await client.get('/api/me');
    assert.equal(res.status, 401);
    const write = await client.request('/api/tokens/x', {
      method: 'DELETE',
      headers: { 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(write.status, 401);
  });

  test('a suspended account’s token answers 401 and works again on reactivation; an expired one answers 401', async () => {
    const { account, api } = await buildApiUser(t, 'viewer');
    assert.equal((await api.get('/api/me')).status, 200);
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', account.id).execute();
    assertProblem(await api.get('/api/me'), 401, 'unauthorized');
    await t.deps.db.updateTable('accounts').set({ suspended_at: null }).where('id', '=', account.id).execute();
    assert.equal((await api.get('/api/me')).status, 200);
    const { token } = await createToken(t.deps, account.id, { name: 'short', expiry: '30' });
    t.clock.advance(31 * 24 * 60 * 60 * 1000);
    assertProblem(await new ApiClient(t, token).get('/api/me'), 401, 'unauthorized');
  });

  test('a read-only token reads and is refused every write with 403 read-only-token, before the route runs', async () => {
    const { api, tokenId } = await buildApiUser(t, 'admin', { readOnly: true });
    const me = await api.get('/api/me');
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.token, { id: tokenId, read_only: true });
    assertProblem(await api.delete(`/api/tokens/${tokenId}`), 403, 'read-only-token');
    assertProblem(await api.post('/api/anything-new', {}), 403, 'read-only-token');
    assert.equal(
      (await t.deps.db.selectFrom('api_tokens').select('id').where('id', '=', tokenId).execute()).length,
      1,
      'not revoked',
    );
  });

  test('a viewer’s token is refused admin acts (every write outside the self-service list) with 403 admin-only', async () => {
    const { api } = await buildApiUser(t, 'viewer');
    assertProblem(await api.post('/api/scans/trigger', {}), 403, 'admin-only');
    assertProblem(await api.request('PUT', '/api/me', {}), 403, 'admin-only');
  });

  test('unknown paths answer 404 and known paths with another method 405 with Allow, as problems', async () => {
    const { api } = await buildApiUser(t, 'admin');
    assertProblem(await api.get('/api/nowhere'), 404, 'not-found');
    assertProblem(await api.get('/api/me/more'), 404, 'not-found');
    const wrong = await api.request('PUT', '/api/me', {});
    assertProblem(wrong, 405, 'method-not-allowed');
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
    const head = await t.app.request('http://localhost/api/me', {
      method: 'HEAD',
      headers: { authorization: `Bearer ${api.token}` },
    });
    assert.equal(head.status, 200);
  });

  test('bodies must be JSON: another media type answers 415, broken JSON 400, over 64 KiB 413, all as problems', async () => {
    const { api, tokenId } = await buildApiUser(t, 'admin');
    const path = `/api/tokens/${tokenId}`;
    assertProblem(
      await api.request('DELETE', path, undefined, {
        raw: 'id=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported-media-type',
    );
    assertProblem(
      await api.request('DELETE', path, undefined, { raw: '{"id":', headers: { 'content-type': 'application/json' } }),
      400,
      'malformed-json',
    );
    const big = await api.request('DELETE', path, undefined, {
      raw: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(big, 413, 'too-large');
    assert.equal(
      (await t.deps.db.selectFrom('api_tokens').select('id').where('id', '=', tokenId).execute()).length,
      1,
      'nothing revoked by a refused request',
    );
  });

  test('a NUL in a query value or any body string (keys too) answers 422 naming the field, before any route', async () => {
    const { api, tokenId } = await buildApiUser(t, 'admin');
    const query = await api.get('/api/tokens?note=a%00b');
    assertProblem(query, 422, 'invalid');
    assert.deepEqual(query.body.errors, [
      { in: 'query', field: 'note', detail: 'This value cannot contain control characters or unpaired surrogates.' },
    ]);
    const body = await api.request('DELETE', `/api/tokens/${tokenId}`, { outer: { line: 'a\u0000b' }, 'k\u0000': 1 });
    assertProblem(body, 422, 'invalid');
    assert.deepEqual(
      body.body.errors.map((e: any) => `${e.in}:${e.field}`),
      ['body:k?', 'body:outer.line'],
    );
    assert.equal(
      (await t.deps.db.selectFrom('api_tokens').select('id').where('id', '=', tokenId).execute()).length,
      1,
      'not revoked',
    );
  });

  test('30 bad tokens from one address lock its bad tokens out for 15 minutes with 429 and Retry-After', async () => {
    const { token } = await buildApiUser(t, 'admin');
    const guesser = new ApiClient(t, `svc_pat_${'B'.repeat(43)}`);
    const from = { address: '203.0.113.9' };
    for (let i = 0; i < 30; i += 1) assertProblem(await guesser.get('/api/me', from), 401, 'unauthorized');
    const refused = await guesser.get('/api/me', from);
    assertProblem(refused, 429, 'too-many-bad-tokens');
    assert.equal(refused.headers.get('retry-after'), '900');
    // A valid token is looked up first and always works (others behind the same NAT are not locked out).
    assert.equal((await new ApiClient(t, token).get('/api/me', from)).status, 200);
    assertProblem(await guesser.get('/api/me', { address: '203.0.113.10' }), 401, 'unauthorized');
    // The public document needs no token and is never throttled.
    assert.equal(
      (
        await t.app.request(
          'http://localhost/api/openapi.json',
          {},
          { incoming: { socket: { remoteAddress: from.address } } },
        )
      ).status,
      200,
    );
    t.clock.advance(15 * 60 * 1000);
    assertProblem(await guesser.get('/api/me', from), 401, 'unauthorized');
  });

  test('API requests are logged with their route template and never with the token', async () => {
    const { api, token, tokenId } = await buildApiUser(t, 'admin');
    assert.equal((await api.delete(`/api/tokens/${tokenId}`)).status, 204);
    const line = t.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.method === 'DELETE');
    assert.equal(line.route, '/api/tokens/:id');
    assert.equal(line.status, 204);
    assert.ok(!t.logs.some((l) => l.includes(token)), 'the token is in no log line');
  });

  test('own tokens: listed without secrets or hashes, revoked idempotently, and never another account’s', async () => {
    const alice = await buildApiUser(t, 'viewer', { username: 'alice' });
    const bob = await buildApiUser(t, 'viewer', { username: 'bob' });
    const second = await createToken(t.deps, alice.account.id, { name: 'ci <deploy>', expiry: '90', readOnly: true });
    const list = await alice.api.get('/api/tokens');
    assert.equal(list.status, 200);
    const rows = list.body.items.map((i: any) => [i.name, i.read_only, i.expired]).sort();
    assert.deepEqual(rows, [
      ['ci <deploy>', true, false],
      ['test', false, false],
    ]);
    assert.ok(
      !list.text.includes(second.token) &&
        !list.text.includes(sha256(second.token)) &&
        !list.text.includes(alice.token),
    );
    assert.equal(
      list.body.items.find((i: any) => i.id === second.id).expires_at,
      new Date(t.clock.now() + 90 * 86_400_000).toISOString(),
    );

    assert.equal((await bob.api.delete(`/api/tokens/${second.id}`)).status, 204, 'another account’s id is a no-op');
    assert.equal((await new ApiClient(t, second.token).get('/api/me')).status, 200, 'still works');
    assert.equal((await alice.api.delete(`/api/tokens/${second.id}`)).status, 204);
    assert.equal((await alice.api.delete(`/api/tokens/${second.id}`)).status, 204, 'again: idempotent');
    assertProblem(await new ApiClient(t, second.token).get('/api/me'), 401, 'unauthorized');
    assert.equal((await alice.api.delete(`/api/tokens/${alice.tokenId}`)).status, 204, 'revoking the token in hand');
    assertProblem(await alice.api.get('/api/me'), 401, 'unauthorized');
  });
});

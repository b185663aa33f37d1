// Security headers on every HTML response, cross-site form refusal, and bad input never reaching a 500.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { signedInAs } from '../../test/helpers/factories.ts';
import { securityHeaderTable, securityHeaders } from './middleware.ts';

forEachDialect((getDb) => {
  test('HTML responses carry CSP without inline script, no framing, nosniff and a referrer policy', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'admin');
    for (const path of ['/login', '/', '/settings', '/no-such-page']) {
      const res = path === '/login' ? await t.client().get(path) : await client.get(path);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'none'/, path);
      assert.doesNotMatch(csp, /unsafe-inline/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.ok(res.headers.get('referrer-policy'), path);
      assert.equal(res.headers.get('cache-control'), 'no-store', path);
      assert.doesNotMatch(res.text, /<script/i, path);
    }
  });

  test('cross-site posts are refused, with or without a session', async () => {
    const t = buildTestApp(getDb());
    const { client, account } = await signedInAs(t, 'viewer');
    const crossSite = await client.post('/logout', {}, { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    const foreignOrigin = await client.request('/logout', {
      method: 'POST',
      body: `_csrf=${client.csrf}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    });
    assert.equal(foreignOrigin.status, 403);
    const loginCsrf = await t.client().post('/login', { username: account.username, password: account.password }, { 'sec-fetch-site': 'same-site' });
    assert.equal(loginCsrf.status, 403, 'login CSRF from a sibling site is refused');
    assert.equal((await client.get('/')).status, 200, 'the session survived the refused posts');
  });

  test('a signed-in post without the session form token is refused', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'viewer');
    const res = await client.post('/logout', { _csrf: 'forged' });
    assert.equal(res.status, 403);
    assert.match(res.text, /out of date/);
    assert.equal((await client.get('/')).status, 200);
  });

  test('malformed bodies get a clear 4xx', async () => {
    const t = buildTestApp(getDb());
    const c = t.client();
    const send = (body: BodyInit, type = 'application/x-www-form-urlencoded') =>
      c.request('/login', { method: 'POST', body, headers: { 'content-type': type, 'sec-fetch-site': 'same-origin' } });
    const huge = await send('username=' + 'a'.repeat(200_000));
    assert.equal(huge.status, 413);
    const badUtf8 = await send(new Uint8Array([0x75, 0x73, 0x65, 0x72, 0x6e, 0x61, 0x6d, 0x65, 0x3d, 0xff, 0xfe]));
    assert.equal(badUtf8.status, 400);
    const badEscape = await send('username=%ff%fe&password=whatever1');
    assert.equal(badEscape.status, 400);
    const json = await send('{"username":"a"}', 'application/json');
    assert.equal(json.status, 415);
    for (const res of [huge, badUtf8, badEscape, json]) assert.doesNotMatch(res.text, /at .*\.ts:\d+/);
  });
});

test('every kind of response carries the security headers; a route may tighten the referrer policy or cache an asset', async () => {
  const app = new Hono();
  app.use('*', securityHeaders(true));
  app.get('/page', (c) => c.html('<p>x</p>'));
  app.get('/raw', () => new Response('built by hand', { headers: { 'X-Frame-Options': 'SAMEORIGIN' } }));
  app.get('/redirect', (c) => c.redirect('/page', 303));
  // Immutable headers (as a fetch result would have), and a hand-built response with a CSP of its own.
  app.get('/immutable', () => Response.redirect('http://localhost/page', 302));
  app.get('/own-csp', () => new Response('x', { headers: { 'Content-Security-Policy': "default-src 'none'" } }));
  app.get('/token-page', (c) => {
    c.header('Referrer-Policy', 'no-referrer');
    return c.html('<p>token</p>');
  });
  app.get('/asset', (c) => {
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body('body{}', 200, { 'Content-Type': 'text/css' });
  });
  app.get('/boom', () => {
    throw new Error('boom');
  });
  app.onError((_err, c) => c.text('failed', 500));
  const expected = new Map(securityHeaderTable(true));
  for (const path of ['/page', '/raw', '/redirect', '/immutable', '/own-csp', '/token-page', '/asset', '/boom']) {
    const res = await app.request(path);
    if (path !== '/boom') assert.notEqual(res.status, 500, path);
    for (const [name, value] of expected) {
      if (path === '/raw' && name === 'X-Frame-Options') continue;
      if (path === '/own-csp' && name === 'Content-Security-Policy') continue;
      if (path === '/token-page' && name === 'Referrer-Policy') continue;
      if (path === '/asset' && name === 'Cache-Control') continue;
      assert.equal(res.headers.get(name), value, `${path} ${name}`);
    }
  }
  assert.match(expected.get('Strict-Transport-Security') ?? '', /max-age=/, 'HSTS when secure cookies are on');
  assert.equal(new Map(securityHeaderTable(false)).has('Strict-Transport-Security'), false);
  assert.equal((await app.request('/raw')).headers.get('X-Frame-Options'), 'SAMEORIGIN', 'a hand-built response keeps what it set');
  assert.equal((await app.request('/token-page')).headers.get('Referrer-Policy'), 'no-referrer');
  assert.equal((await app.request('/own-csp')).headers.get('Content-Security-Policy'), "default-src 'none'");
  assert.equal((await app.request('/immutable')).headers.get('Location'), 'http://localhost/page');
  assert.equal((await app.request('/asset')).headers.get('Cache-Control'), 'public, max-age=3600');
});

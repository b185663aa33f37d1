// Security headers on every HTML response, cross-site form refusal, and bad input never reaching a 500.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { serveTestApp } from '../../test/helpers/browser.ts';
import { signedInAs } from '../../test/helpers/factories.ts';
import { securityHeaders } from './middleware.ts';

/** The security headers every response carries, by lowercase name, unless the route set its own. */
function securityHeaderTable(secure: boolean): [string, string][] {
  return [
    [
      'content-security-policy',
      "default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    ],
    ['cross-origin-opener-policy', 'same-origin'],
    ['cross-origin-resource-policy', 'same-origin'],
    ['origin-agent-cluster', '?1'],
    ['referrer-policy', 'same-origin'],
    ...(secure ? [['strict-transport-security', 'max-age=31536000'] as [string, string]] : []),
    ['x-content-type-options', 'nosniff'],
    ['x-dns-prefetch-control', 'off'],
    ['x-download-options', 'noopen'],
    ['x-frame-options', 'DENY'],
    ['x-permitted-cross-domain-policies', 'none'],
    ['x-xss-protection', '0'],
    ['cache-control', 'no-store'],
  ];
}

forEachDialect((getDb) => {
  test('HTML responses carry CSP without inline script, no framing, nosniff and a referrer policy', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'admin');
    for (const path of ['/login', '/', '/settings', '/no-such-page']) {
      const res = path === '/login' ? await t.client().get(path) : await client.get(path);
      const csp = res.headers.get('content-security-policy') ?? '';
      // The sign-in page runs the passkey ceremony: svc's own script only (test/ceremony-csp.test.ts checks every page).
      assert.match(csp, path === '/login' ? /script-src 'self';/ : /script-src 'none'/, path);
      assert.doesNotMatch(csp, /unsafe-eval/, path);
      assert.doesNotMatch(csp, /unsafe-inline/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.ok(res.headers.get('referrer-policy'), path);
      assert.equal(res.headers.get('cache-control'), 'no-store', path);
      if (path === '/login')
        assert.equal([...res.text.matchAll(/<script/gi)].length, 1, 'one script tag, svc’s ceremony script');
      else assert.doesNotMatch(res.text, /<script/i, path);
    }
  });

  // The whole app as served, through both header paths: every early answer of the middleware chain (gate, body limit,
  // form checks, CSRF), routes, errors and overrides.
  test('every response of the real app carries the security headers, served by Node and through app.request', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'viewer');
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const served = await serveTestApp(t);
    const table = securityHeaderTable(false);
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };
    const big = 'a='.padEnd(70_000, 'x');
    const probes: [label: string, status: number, path: string, init: RequestInit, overridden?: string][] = [
      ['anonymous page', 303, '/', {}],
      ['signed-in page', 200, '/', { headers: { cookie } }],
      ['signed-in HEAD', 200, '/', { method: 'HEAD', headers: { cookie } }],
      ['viewer on an admin page', 403, '/settings', { headers: { cookie } }],
      ['no such page', 404, '/no-such-page', { headers: { cookie } }],
      ['API without a token', 401, '/api/me', {}],
      ['API, no such route', 401, '/api/nowhere', {}],
      ['asset', 200, '/static/app.css', {}, 'cache-control'],
      ['health', 200, '/healthz', {}],
      ['invitation link no longer valid', 410, '/invite?token=x', {}, 'referrer-policy'],
      ['body over the limit', 413, '/login', { method: 'POST', headers: form, body: big }],
      ['not UTF-8', 400, '/login', { method: 'POST', headers: form, body: 'username=%ff' }],
      [
        'not a form',
        415,
        '/login',
        { method: 'POST', headers: { ...form, 'content-type': 'application/json' }, body: '{}' },
      ],
      [
        'cross-site post',
        403,
        '/logout',
        { method: 'POST', headers: { ...form, cookie, 'sec-fetch-site': 'cross-site' }, body: '_csrf=x' },
      ],
      ['wrong form token', 403, '/logout', { method: 'POST', headers: { ...form, cookie }, body: '_csrf=x' }],
    ];
    try {
      for (const via of ['node', 'app.request'] as const) {
        for (const [label, status, path, init, overridden] of probes) {
          const res =
            via === 'node'
              ? await fetch(`${served.url}${path}`, { ...init, redirect: 'manual' })
              : await t.app.request(path, init);
          assert.equal(res.status, status, `${via}: ${label}`);
          for (const [name, value] of table) {
            if (name !== overridden) assert.equal(res.headers.get(name), value, `${via}: ${label}: ${name}`);
          }
          if (overridden) assert.ok(res.headers.get(overridden), `${via}: ${label}: ${overridden}`);
        }
        // A body over the limit without a length (chunked): read up to the limit, then refused.
        const chunked = new ReadableStream({
          start(controller) {
            for (let i = 0; i < 8; i++)
              controller.enqueue(new TextEncoder().encode(big.slice(i * 10_000, (i + 1) * 10_000)));
            controller.close();
          },
        });
        const init = { method: 'POST', headers: form, body: chunked, duplex: 'half' } as RequestInit;
        const res = via === 'node' ? await fetch(`${served.url}/login`, init) : await t.app.request('/login', init);
        assert.equal(res.status, 413, `${via}: chunked body over the limit`);
        for (const [name, value] of table) assert.equal(res.headers.get(name), value, `${via}: chunked 413: ${name}`);
      }
    } finally {
      await served.close();
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
    const loginCsrf = await t
      .client()
      .post('/login', { username: account.username, password: account.password }, { 'sec-fetch-site': 'same-site' });
    assert.equal(loginCsrf.status, 403, 'login CSRF from a sibling site is refused');
    assert.equal((await client.get('/')).status, 200, 'the session survived the refused posts');
  });

  test('a back-channel logout post is no browser form: no form token, its own JSON answers; other posts keep their checks', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'viewer');
    // A provider's server sends no Fetch Metadata and no form token; a browser's session cookie changes nothing.
    const fromServer = await t.app.request('http://localhost/login/sso/acme/backchannel-logout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.example' },
      body: 'logout_token=x',
    });
    assert.equal(fromServer.status, 400);
    assert.equal((await fromServer.json()).error, 'invalid_request');
    const withCookie = await client.post('/login/sso/acme/backchannel-logout', { _csrf: 'forged', logout_token: 'x' });
    assert.equal(withCookie.status, 400);
    assert.match(withCookie.text, /"error":"invalid_request"/);
    assert.equal((await client.post('/logout', { _csrf: 'forged' })).status, 403, 'sign-out still needs its token');
    assert.equal((await client.get('/')).status, 200);
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
    const huge = await send(`username=${'a'.repeat(200_000)}`);
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

// Served by Node or through app.request, every kind of response gets the same headers.
for (const via of ['app.request', 'the Node server'] as const) {
  test(`every kind of response carries the security headers; a route may tighten the referrer policy or cache an asset (${via})`, async () => {
    const app = new Hono();
    app.use('*', securityHeaders(true));
    app.get('/page', (c) => c.html('<p>x</p>'));
    app.get('/raw', () => new Response('built by hand', { headers: { 'X-Frame-Options': 'SAMEORIGIN' } }));
    app.get('/redirect', (c) => c.redirect('/page', 303));
    // Immutable headers (as a fetch result would have), and a hand-built response with a CSP of its own.
    app.get('/immutable', () => Response.redirect('http://localhost/page', 302));
    app.get('/own-csp', () => new Response('x', { headers: { 'Content-Security-Policy': "default-src 'none'" } }));
    app.get('/token-page', (c) => {
      c.header('Referrer-Policy', 'strict-origin');
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
    let get = (path: string) => Promise.resolve(app.request(path));
    let close = () => Promise.resolve();
    if (via === 'the Node server') {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
      await new Promise<void>((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      get = (path) => fetch(`${base}${path}`, { redirect: 'manual' });
      close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    }
    try {
      const expected = new Map(securityHeaderTable(true));
      for (const path of [
        '/page',
        '/raw',
        '/redirect',
        '/immutable',
        '/own-csp',
        '/token-page',
        '/asset',
        '/boom',
        '/missing',
      ]) {
        const res = await get(path);
        if (path !== '/boom') assert.notEqual(res.status, 500, path);
        for (const [name, value] of expected) {
          if (path === '/raw' && name === 'x-frame-options') continue;
          if (path === '/own-csp' && name === 'content-security-policy') continue;
          if (path === '/token-page' && name === 'referrer-policy') continue;
          if (path === '/asset' && name === 'cache-control') continue;
          assert.equal(res.headers.get(name), value, `${path} ${name}`);
        }
      }
      assert.match(expected.get('strict-transport-security') ?? '', /max-age=/, 'HSTS when secure cookies are on');
      assert.equal(new Map(securityHeaderTable(false)).has('strict-transport-security'), false);
      assert.equal(
        (await get('/raw')).headers.get('X-Frame-Options'),
        'SAMEORIGIN',
        'a hand-built response keeps what it set',
      );
      assert.equal((await get('/token-page')).headers.get('Referrer-Policy'), 'strict-origin');
      assert.equal((await get('/own-csp')).headers.get('Content-Security-Policy'), "default-src 'none'");
      assert.equal((await get('/immutable')).headers.get('Location'), 'http://localhost/page');
      assert.equal((await get('/asset')).headers.get('Cache-Control'), 'public, max-age=3600');
      assert.equal((await get('/page')).headers.get('Content-Type'), 'text/html; charset=UTF-8');
    } finally {
      await close();
    }
  });
}

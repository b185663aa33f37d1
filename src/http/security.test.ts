// Security headers on every HTML response, cross-site form refusal, and bad input never reaching a 500.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { signedInAs } from '../../test/helpers/factories.ts';

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

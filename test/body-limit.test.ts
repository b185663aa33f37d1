// Oversized bodies against the real server: every 413 says `Connection: close`, so a kept-alive client never reuses a
// socket whose unread body the server will not wait for.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { Client } from 'undici';
import { buildTestApp } from './helpers/app.ts';
import { serveTestApp } from './helpers/browser.ts';
import { forEachDialect } from './helpers/db.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };
/** About twice the 64 KiB limit, as the fuzz run sent. */
const OVERSIZED = 130_000;

/** A request's status and connection header, its body read to the end. */
async function send(client: Client, options: Parameters<Client['request']>[0]) {
  const res = await client.request(options);
  await res.body.text();
  return { status: res.statusCode, connection: res.headers.connection };
}

/** A body sent in 10 kB chunks without a Content-Length. */
function chunked(total: number): Readable {
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; sent += 10_000) yield Buffer.alloc(10_000, 'x');
    })(),
  );
}

forEachDialect((getDb) => {
  test('a 413 closes the connection, and the next request on the same client succeeds', async () => {
    const served = await serveTestApp(buildTestApp(getDb()));
    // An undici Client is one connection, kept alive between requests.
    const client = new Client(served.url);
    try {
      const small = await send(client, {
        path: '/login',
        method: 'POST',
        headers: FORM,
        body: 'username=a&password=b',
      });
      assert.notEqual(small.status, 413);
      assert.notEqual(small.connection, 'close', 'a body within the limit keeps the connection');

      const declared = await send(client, {
        path: '/login',
        method: 'POST',
        headers: FORM,
        body: 'a='.padEnd(OVERSIZED, 'x'),
      });
      assert.deepEqual(declared, { status: 413, connection: 'close' }, 'Content-Length over the limit');
      const after = await send(client, { path: '/healthz', method: 'GET' });
      assert.equal(after.status, 200, 'the next request after a 413 succeeds');

      const streamed = await send(client, { path: '/login', method: 'POST', headers: FORM, body: chunked(OVERSIZED) });
      assert.deepEqual(streamed, { status: 413, connection: 'close' }, 'chunked body over the limit');
      const afterChunked = await send(client, {
        path: '/login',
        method: 'POST',
        headers: FORM,
        body: 'username=a&password=b',
      });
      assert.notEqual(afterChunked.status, 413, 'the next post after a chunked 413 succeeds');
    } finally {
      await client.close();
      await served.close();
    }
  });

  test('a declared length over the limit is refused before the body is read', { timeout: 20_000 }, async () => {
    const served = await serveTestApp(buildTestApp(getDb()));
    const client = new Client(served.url);
    // The body never ends: only an answer decided from Content-Length alone can arrive.
    const endless = new Readable({ read() {} });
    endless.push('a='.padEnd(1000, 'x'));
    try {
      const res = await client.request({
        path: '/login',
        method: 'POST',
        headers: { ...FORM, 'content-length': String(10 * 1024 * 1024) },
        body: endless,
      });
      assert.equal(res.statusCode, 413);
      assert.equal(res.headers.connection, 'close');
      await res.body.text();
    } finally {
      endless.destroy();
      await client.destroy();
      await served.close();
    }
  });
});

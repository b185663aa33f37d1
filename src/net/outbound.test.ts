import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import { fixtureResolver } from '../../test/helpers/delivery.ts';
import { HOOK_TEST_CERT, startReceiver, type Receiver } from '../../test/helpers/receiver.ts';
import { createOutboundClient } from './outbound.ts';

let rx: Receiver;
let tlsRx: Receiver;
before(async () => {
  rx = await startReceiver();
  tlsRx = await startReceiver({ tls: true });
});
after(async () => {
  await rx.close();
  await tlsRx.close();
});
beforeEach(() => {
  for (const r of [rx, tlsRx]) {
    r.received.length = 0;
    r.connections = 0;
    r.answer = () => ({ status: 200 });
  }
});

test('URLs outside the policy are refused before any lookup or connection', async () => {
  const resolver = fixtureResolver({ localhost: ['127.0.0.1'] });
  const client = createOutboundClient({ resolver });
  const cases: [string, string][] = [
    [`http://localhost:${rx.port}/`, 'blocked: http is allowed only to a loopback IP address'],
    [`http://10.0.0.1:${rx.port}/`, 'blocked: http is allowed only to a loopback IP address'],
    [`https://127.0.0.1:${tlsRx.port}/`, 'blocked: internal address'],
    [`https://[::ffff:127.0.0.1]:${tlsRx.port}/`, 'blocked: internal address'],
    [`https://0x7f.1:${tlsRx.port}/`, 'blocked: internal address'],
    [`https://169.254.169.254/latest/meta-data`, 'blocked: internal address'],
    [`https://user:pw@example.com/`, 'blocked: the URL carries credentials'],
    [`ftp://example.com/`, 'blocked: ftp URLs are not allowed'],
    ['not a url', 'blocked: not an absolute URL'],
  ];
  for (const [url, error] of cases) {
    assert.deepEqual(await client.post(url, '{}', {}), { kind: 'failed', status: null, error, excerpt: null }, url);
  }
  assert.deepEqual(resolver.calls, []);
  assert.equal(rx.connections + tlsRx.connections, 0);
  await client.close();
});

test('the loopback exception: http to a loopback IP literal of either family', async () => {
  const v6 = await startReceiver({ host: '::1' });
  v6.answer = () => ({ status: 200 });
  const client = createOutboundClient();
  assert.deepEqual(await client.post(`${rx.url}/v4`, '{}', {}), { kind: 'delivered', status: 200, excerpt: null });
  assert.deepEqual(await client.post(`${v6.url}/v6`, '{}', {}), { kind: 'delivered', status: 200, excerpt: null });
  assert.equal(rx.received.length + v6.received.length, 2);
  await client.close();
  await v6.close();
});

test('the dialer re-checks at connect time: an address refused after the pre-check is never connected to', async () => {
  // The policy says yes while the name is vetted, then no from the moment the socket is about to be opened.
  let checks = 0;
  const policy = (a: string) => checks++ === 0 && a === '127.0.0.1';
  const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
  const client = createOutboundClient({ resolver, policy, extraCa: [HOOK_TEST_CERT] });
  const outcome = await client.post(`https://hook.test:${tlsRx.port}/`, '{}', {});
  assert.deepEqual(outcome, {
    kind: 'failed',
    status: null,
    error: 'blocked: resolves to an internal address',
    excerpt: null,
  });
  assert.equal(checks, 2, 'checked at resolution, then refused by the dialer');
  assert.equal(tlsRx.connections, 0);
  await client.close();
});

test('pinned connections: a keep-alive pool is only reused while the name resolves to the same vetted addresses', async () => {
  let answer = ['127.0.0.1'];
  const resolver = fixtureResolver({ 'hook.test': () => answer });
  const client = createOutboundClient({ resolver, policy: (a) => a === '127.0.0.1', extraCa: [HOOK_TEST_CERT] });
  for (const path of ['/a', '/b', '/c', '/d'])
    assert.equal((await client.post(`https://hook.test:${tlsRx.port}${path}`, '{}', {})).kind, 'delivered');
  assert.ok(tlsRx.connections < 4, 'vetted connections were reused');
  answer = ['127.0.0.1', '10.1.2.3'];
  const outcome = await client.post(`https://hook.test:${tlsRx.port}/c`, '{}', {});
  assert.equal(
    outcome.kind === 'failed' && outcome.error,
    'blocked: resolves to an internal address',
    'checked on every attempt, pooled or not',
  );
  assert.deepEqual(
    tlsRx.received.map((r) => r.path),
    ['/a', '/b', '/c', '/d'],
  );
  await client.close();
});

test('the response excerpt: the first 1024 bytes of the body as text, cut at a character, null when empty', async () => {
  const cases: [string, string | null][] = [
    ['', null],
    ['thanks', 'thanks'],
    ['a'.repeat(2000), 'a'.repeat(1024)],
    [`x${'é'.repeat(600)}`, `x${'é'.repeat(511)}`], // byte 1024 falls inside a two-byte character, which is dropped
    ['ok\0', 'ok\uFFFD'], // PostgreSQL text cannot hold NUL
  ];
  const client = createOutboundClient();
  for (const [body, excerpt] of cases) {
    rx.answer = () => ({ status: 200, body });
    assert.deepEqual(
      await client.post(`${rx.url}/ok`, '{}', {}),
      { kind: 'delivered', status: 200, excerpt },
      body.slice(0, 20),
    );
    if (excerpt) assert.ok(Buffer.byteLength(excerpt) <= 1024);
  }
  rx.answer = () => ({ status: 422, body: '{"error":"unknown event"}' });
  assert.deepEqual(await client.post(`${rx.url}/no`, '{}', {}), {
    kind: 'failed',
    status: 422,
    error: 'HTTP 422',
    excerpt: '{"error":"unknown event"}',
  });
  await client.close();
});

test('an excerpt of bytes that are not UTF-8 still fits in 1 KiB once each bad byte becomes U+FFFD', async () => {
  const server = http.createServer((_req, res) => res.end(Buffer.alloc(2000, 0xff)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createOutboundClient();
  const outcome = await client.post(`http://127.0.0.1:${(server.address() as AddressInfo).port}/binary`, '{}', {});
  assert.deepEqual(outcome, { kind: 'delivered', status: 200, excerpt: '\uFFFD'.repeat(341) }); // 1023 bytes; a 342nd would not fit
  await client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('a body over the cap: the verdict comes from the status line and the connection is dropped mid-body', async () => {
  // Far more than loopback socket buffers hold: a client that dropped the connection leaves data unread, so the
  // receiver sees a reset; one that read the reply to its end would close cleanly.
  const huge = Buffer.alloc(32 * 1024 * 1024, 'y');
  const socketErrors: string[] = [];
  let socketClosed: Promise<unknown> | undefined;
  const server = http.createServer((req, res) => {
    req.socket.on('error', (e: NodeJS.ErrnoException) => socketErrors.push(e.code ?? ''));
    socketClosed = new Promise((resolve) => req.socket.on('close', resolve));
    res.end(huge);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createOutboundClient({ bodyCapBytes: 2048 });
  const outcome = await client.post(`http://127.0.0.1:${(server.address() as AddressInfo).port}/big`, '{}', {});
  assert.deepEqual(outcome, { kind: 'delivered', status: 200, excerpt: 'y'.repeat(1024) });
  await client.close();
  await socketClosed;
  assert.ok(
    socketErrors.some((c) => c === 'ECONNRESET' || c === 'EPIPE'),
    `the connection was reset mid-body (${socketErrors})`,
  );
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('redirects are never followed: a 3xx is a failed attempt with its status', async () => {
  rx.answer = (r) =>
    r.path === '/moved'
      ? { status: 302, headers: { location: `${rx.url}/followed` }, body: 'see elsewhere' }
      : { status: 200 };
  const client = createOutboundClient();
  assert.deepEqual(await client.post(`${rx.url}/moved`, '{}', {}), {
    kind: 'failed',
    status: 302,
    error: 'redirect 302 not followed',
    excerpt: 'see elsewhere',
  });
  assert.deepEqual(
    rx.received.map((r) => r.path),
    ['/moved'],
  );
  await client.close();
});

// The runner's timeouts below only turn a hang into a failure if a stage ever escaped the budget; they assert no
// timing.
test('one budget for the attempt: a receiver that never answers, or a lookup that never ends, times out', {
  timeout: 30_000,
}, async () => {
  rx.answer = () => 'hang';
  const resolver = () => new Promise<never>(() => {});
  const client = createOutboundClient({ resolver, timeoutMs: 200 });
  const timedOut = { kind: 'failed', status: null, error: 'timed out after 0.2 s', excerpt: null };
  assert.deepEqual(await client.post(`${rx.url}/hang`, '{}', {}), timedOut);
  assert.deepEqual(await client.post('https://slow-dns.test/hook', '{}', {}), timedOut);
  await client.close();
});

test('a stop signal aborts an attempt without a verdict, whatever stage it is in', { timeout: 30_000 }, async () => {
  rx.answer = () => 'hang';
  let looking = () => {};
  const lookupStarted = new Promise<void>((resolve) => (looking = resolve));
  const resolver = () => {
    looking();
    return new Promise<never>(() => {});
  };
  const client = createOutboundClient({ resolver });

  const stop = new AbortController();
  const pending = client.post(`${rx.url}/hang`, '{}', {}, stop.signal);
  await rx.waitFor(1);
  stop.abort();
  assert.deepEqual(await pending, { kind: 'aborted' });

  const stopLookup = new AbortController();
  const resolving = client.post('https://slow-dns.test/hook', '{}', {}, stopLookup.signal);
  await lookupStarted;
  stopLookup.abort();
  assert.deepEqual(await resolving, { kind: 'aborted' });

  assert.deepEqual(
    await client.post(`${rx.url}/late`, '{}', {}, stop.signal),
    { kind: 'aborted' },
    'already stopped: nothing is sent',
  );
  assert.equal(rx.received.length, 1);
  await client.close();
});

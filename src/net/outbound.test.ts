import assert from 'node:assert/strict';
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
    assert.deepEqual(await client.post(url, '{}', {}), { kind: 'failed', status: null, error }, url);
  }
  assert.deepEqual(resolver.calls, []);
  assert.equal(rx.connections + tlsRx.connections, 0);
  await client.close();
});

test('the loopback exception: http to a loopback IP literal of either family', async () => {
  const v6 = await startReceiver({ host: '::1' });
  const client = createOutboundClient();
  assert.deepEqual(await client.post(`${rx.url}/v4`, '{}', {}), { kind: 'delivered', status: 200 });
  assert.deepEqual(await client.post(`${v6.url}/v6`, '{}', {}), { kind: 'delivered', status: 200 });
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
  assert.deepEqual(outcome, { kind: 'failed', status: null, error: 'blocked: resolves to an internal address' });
  assert.equal(checks, 2, 'checked at resolution, then refused by the dialer');
  assert.equal(tlsRx.connections, 0);
  await client.close();
});

test('pinned connections: a keep-alive pool is only reused while the name resolves to the same vetted addresses', async () => {
  let answer = ['127.0.0.1'];
  const resolver = fixtureResolver({ 'hook.test': () => answer });
  const client = createOutboundClient({ resolver, policy: (a) => a === '127.0.0.1', extraCa: [HOOK_TEST_CERT] });
  for (const path of ['/a', '/b', '/c', '/d']) assert.equal((await client.post(`https://hook.test:${tlsRx.port}${path}`, '{}', {})).kind, 'delivered');
  assert.ok(tlsRx.connections < 4, 'vetted connections were reused');
  answer = ['127.0.0.1', '10.1.2.3'];
  const outcome = await client.post(`https://hook.test:${tlsRx.port}/c`, '{}', {});
  assert.equal(outcome.kind === 'failed' && outcome.error, 'blocked: resolves to an internal address', 'checked on every attempt, pooled or not');
  assert.deepEqual(tlsRx.received.map((r) => r.path), ['/a', '/b', '/c', '/d']);
  await client.close();
});

test('a huge or endless response body is cut off at the cap; the verdict comes from the status line', async () => {
  rx.answer = () => ({ status: 200, body: 'y'.repeat(5 * 1024 * 1024) });
  const client = createOutboundClient({ bodyCapBytes: 1024 });
  assert.deepEqual(await client.post(`${rx.url}/big`, '{}', {}), { kind: 'delivered', status: 200 });
  await client.close();
});

test('a stop signal aborts an attempt without a verdict', async () => {
  rx.answer = () => 'hang';
  const client = createOutboundClient();
  const stop = new AbortController();
  const pending = client.post(`${rx.url}/hang`, '{}', {}, stop.signal);
  await rx.waitFor(1);
  stop.abort();
  assert.deepEqual(await pending, { kind: 'aborted' });
  await client.close();
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixtureResolver } from '../../test/helpers/delivery.ts';
import { HOOK_TEST_CERT, closedPort, useReceiver } from '../../test/helpers/receiver.ts';
import { checkConnection, type ConnectionCheck } from './check-connection.ts';

const httpReceiver = useReceiver();
const tlsReceiver = useReceiver({ tls: true });

/** Only the test receivers' address is let through besides the production policy's public addresses. */
const allowLoopbackV4 = (a: string) => a === '127.0.0.1';
const outcomes = (c: ConnectionCheck) => c.steps.map((s) => `${s.step}:${s.outcome}`);
const detail = (c: ConnectionCheck, step: string) => c.steps.find((s) => s.step === step)!.detail;

test('a reachable https receiver: resolved, allowed, TCP connected, TLS verified with its certificate, and no request sent', async () => {
  const tlsRx = tlsReceiver();
  const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
  const check = await checkConnection(`https://hook.test:${tlsRx.port}/hooks/abc`, {
    resolver,
    policy: allowLoopbackV4,
    extraCa: [HOOK_TEST_CERT],
  });
  assert.equal(check.ok, true);
  assert.deepEqual(outcomes(check), ['resolve:ok', 'policy:ok', 'tcp:ok', 'tls:ok']);
  assert.equal(detail(check, 'resolve'), 'hook.test resolved to 1 address: 127.0.0.1.');
  assert.match(detail(check, 'tcp'), new RegExp(`^Connected to 127\\.0\\.0\\.1 port ${tlsRx.port} in \\d+ ms\\.$`));
  assert.match(
    detail(check, 'tls'),
    /^Handshake ok in \d+ ms \(TLSv1\.[23]\): certificate for hook\.test, issued by hook\.test, valid until 2126-10-29 01:59 UTC\.$/,
  );
  assert.equal(tlsRx.connections, 1);
  assert.equal(tlsRx.received.length, 0, 'no HTTP request reached the receiver');
});

test('the TLS step verifies the certificate as a delivery does: an untrusted one fails the handshake', async () => {
  const tlsRx = tlsReceiver();
  const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
  const check = await checkConnection(`https://hook.test:${tlsRx.port}/`, { resolver, policy: allowLoopbackV4 });
  assert.equal(check.ok, false);
  assert.deepEqual(outcomes(check), ['resolve:ok', 'policy:ok', 'tcp:ok', 'tls:failed']);
  assert.equal(detail(check, 'tls'), 'Handshake failed: TLS certificate not trusted.');
  assert.equal(tlsRx.received.length, 0);
});

test('an internal address is refused by the policy and never connected to', async () => {
  const tlsRx = tlsReceiver();
  const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'], 'mixed.test': ['8.8.8.8', '10.1.2.3'] });
  const named = await checkConnection(`https://hook.test:${tlsRx.port}/`, { resolver, extraCa: [HOOK_TEST_CERT] });
  assert.deepEqual(outcomes(named), ['resolve:ok', 'policy:failed', 'tcp:skipped', 'tls:skipped']);
  assert.equal(
    detail(named, 'policy'),
    'Refused by the address policy: 127.0.0.1 (loopback) is an internal address. No connection was attempted.',
  );
  const mixed = await checkConnection('https://mixed.test/', { resolver });
  assert.match(
    detail(mixed, 'policy'),
    /^Refused by the address policy: 10\.1\.2\.3 \(private\) is an internal address\./,
  );
  const literal = await checkConnection(`https://127.0.0.1:${tlsRx.port}/`, { resolver });
  assert.deepEqual(outcomes(literal), ['resolve:ok', 'policy:failed', 'tcp:skipped', 'tls:skipped']);
  assert.match(detail(literal, 'policy'), /127\.0\.0\.1 \(loopback\) is an internal address/);
  const metadata = await checkConnection('https://169.254.169.254/latest/meta-data', { resolver });
  assert.match(detail(metadata, 'policy'), /169\.254\.169\.254 \(link-local/);
  const plain = await checkConnection('http://10.0.0.1/', { resolver });
  assert.equal(
    detail(plain, 'policy'),
    'Refused: http is allowed only to a loopback IP address. No connection was attempted.',
  );
  assert.deepEqual(resolver.calls, ['hook.test', 'mixed.test'], 'literals are never looked up');
  assert.equal(tlsRx.connections, 0, 'nothing was connected to');
});

test('the pinned lookup re-checks when the socket is opened, as the delivery dialer does', async () => {
  const tlsRx = tlsReceiver();
  let checks = 0;
  const policy = (a: string) => checks++ === 0 && a === '127.0.0.1';
  const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
  const check = await checkConnection(`https://hook.test:${tlsRx.port}/`, {
    resolver,
    policy,
    extraCa: [HOOK_TEST_CERT],
  });
  assert.deepEqual(outcomes(check), ['resolve:ok', 'policy:ok', 'tcp:failed', 'tls:skipped']);
  assert.equal(
    detail(check, 'tcp'),
    `Could not connect to port ${tlsRx.port}: blocked: resolves to an internal address.`,
  );
  assert.equal(tlsRx.connections, 0);
});

test('a closed port, an unknown name and a lookup that never ends fail their own step in plain words', {
  timeout: 30_000,
}, async () => {
  const port = await closedPort();
  const closed = await checkConnection(`http://127.0.0.1:${port}/hook`);
  assert.deepEqual(outcomes(closed), ['resolve:ok', 'policy:ok', 'tcp:failed', 'tls:skipped']);
  assert.equal(detail(closed, 'tcp'), `Could not connect to port ${port}: connection refused.`);
  const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
  const closedTls = await checkConnection(`https://hook.test:${port}/`, { resolver, policy: allowLoopbackV4 });
  assert.equal(detail(closedTls, 'tcp'), `Could not connect to port ${port}: connection refused.`);
  const unknown = await checkConnection('https://nowhere.test/', { resolver });
  assert.deepEqual(outcomes(unknown), ['resolve:failed', 'policy:skipped', 'tcp:skipped', 'tls:skipped']);
  assert.equal(detail(unknown, 'resolve'), 'Could not resolve nowhere.test: DNS lookup failed.');
  const hanging = await checkConnection('https://slow.test/', {
    resolver: () => new Promise<never>(() => {}),
    stepTimeoutMs: 100,
  });
  assert.equal(detail(hanging, 'resolve'), 'Could not resolve slow.test: timed out after 0.1 s.');
});

test('plain http to a loopback literal: TCP only, no TLS, and still no request', async () => {
  const rx = httpReceiver();
  const check = await checkConnection(`${rx.url}/hook`);
  assert.equal(check.ok, true);
  assert.deepEqual(outcomes(check), ['resolve:ok', 'policy:ok', 'tcp:ok', 'tls:skipped']);
  assert.equal(detail(check, 'policy'), 'Allowed: plain http:// to a loopback IP address, the one exception.');
  assert.equal(detail(check, 'tls'), 'Not used: plain http:// to a loopback address.');
  assert.equal(rx.connections, 1);
  assert.equal(rx.received.length, 0);
});

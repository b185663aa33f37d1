import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientAddressOf, parseTrustedProxies, throttleBucket } from './client-address.ts';

test('without trusted proxies the socket peer is the client and forwarding headers are ignored', () => {
  assert.equal(clientAddressOf('203.0.113.5', '198.51.100.1', []), '203.0.113.5');
  assert.equal(clientAddressOf('::ffff:203.0.113.5', undefined, []), '203.0.113.5');
  assert.equal(clientAddressOf(undefined, undefined, []), 'unknown');
});

test('behind a trusted proxy the right-most untrusted X-Forwarded-For entry is the client', () => {
  const proxies = parseTrustedProxies('10.0.0.0/8, 192.168.1.1')!;
  assert.equal(clientAddressOf('10.0.0.2', '198.51.100.1', proxies), '198.51.100.1');
  assert.equal(
    clientAddressOf('10.0.0.2', '6.6.6.6, 198.51.100.1, 192.168.1.1', proxies),
    '198.51.100.1',
    'a spoofed left entry is not taken',
  );
  assert.equal(
    clientAddressOf('203.0.113.9', '198.51.100.1', proxies),
    '203.0.113.9',
    'an untrusted peer cannot claim another address',
  );
  assert.equal(clientAddressOf('10.0.0.2', 'garbage', proxies), '10.0.0.2');
  assert.equal(parseTrustedProxies('10.0.0.0/33'), undefined);
  assert.equal(parseTrustedProxies('proxy.internal'), undefined);
});

test('IPv6 clients are throttled by their /64', () => {
  assert.equal(throttleBucket('2001:db8:1:2:aaaa::1'), throttleBucket('2001:db8:1:2:ffff::9'));
  assert.notEqual(throttleBucket('2001:db8:1:2::1'), throttleBucket('2001:db8:1:3::1'));
  assert.equal(throttleBucket('198.51.100.1'), '198.51.100.1');
});

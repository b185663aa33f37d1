import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyAddress, ipLiteralOfHostname, isGloballyReachable, isLoopbackAddress } from './address-policy.ts';

test('non-global addresses of every special-purpose kind are refused', () => {
  const internal = [
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.1',
    '192.0.2.10',
    '192.168.1.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::127.0.0.1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '64:ff9b:1::1',
    '2002:7f00:1::1',
    '2002:c0a8:0101::1',
    '2001::1',
    '2001:2::1',
    '100::1',
    'fec0::1',
    '3fff::1',
  ];
  for (const a of internal) assert.equal(isGloballyReachable(a), false, a);
});

test('public addresses are allowed, including public IPv4 inside IPv6 forms', () => {
  for (const a of [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:0808:0808::1',
  ]) {
    assert.equal(isGloballyReachable(a), true, a);
  }
});

test('the verdict names the range', () => {
  assert.deepEqual(classifyAddress('169.254.169.254'), {
    global: false,
    reason: 'link-local (includes the cloud metadata address)',
  });
  assert.equal(classifyAddress('not-an-ip').global, false);
});

test('IP literals are recognised after URL normalisation, including alternative IPv4 spellings', () => {
  for (const url of [
    'http://0x7f.1/',
    'http://2130706433/',
    'http://017700000001/',
    'http://127.1/',
    'http://0177.0.0.1/',
  ]) {
    const host = new URL(url).hostname;
    assert.equal(ipLiteralOfHostname(host), '127.0.0.1', url);
  }
  assert.equal(ipLiteralOfHostname(new URL('https://[::ffff:a9fe:a9fe]/').hostname), '::ffff:a9fe:a9fe');
  assert.equal(ipLiteralOfHostname('example.com'), undefined);
  assert.equal(ipLiteralOfHostname('localhost'), undefined);
  assert.equal(isLoopbackAddress('127.0.0.2'), true);
  assert.equal(isLoopbackAddress('::1'), true);
  assert.equal(isLoopbackAddress('::ffff:127.0.0.1'), true);
  assert.equal(isLoopbackAddress('10.0.0.1'), false);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateChannelUrl } from './channel-url.ts';

// [input, normalised URL stored]
const accepted: [string, string][] = [
  ['https://hooks.example.com/svc/abc', 'https://hooks.example.com/svc/abc'],
  ['  https://hooks.example.com/path?token=x  ', 'https://hooks.example.com/path?token=x'],
  ['HTTPS://Hooks.Example.COM:8443/a', 'https://hooks.example.com:8443/a'],
  ['https://8.8.8.8/hook', 'https://8.8.8.8/hook'],
  ['https://[2606:4700:4700::1111]/hook', 'https://[2606:4700:4700::1111]/hook'],
  ['https://[::ffff:8.8.8.8]/hook', 'https://[::ffff:808:808]/hook'],
  ['https://@hooks.example.com/', 'https://hooks.example.com/'],
  ['http://127.0.0.1:8080/hook', 'http://127.0.0.1:8080/hook'],
  ['http://127.0.0.2/hook', 'http://127.0.0.2/hook'],
  ['http://[::1]:9000/hook', 'http://[::1]:9000/hook'],
  ['http://[::ffff:127.0.0.1]:9000/', 'http://[::ffff:7f00:1]:9000/'],
  // Alternative IPv4 spellings of loopback, normalised by the URL parser, are still loopback literals.
  ['http://2130706433/', 'http://127.0.0.1/'],
  ['http://0x7f.1/', 'http://127.0.0.1/'],
  ['http://017700000001/', 'http://127.0.0.1/'],
  ['http://127.1:81/', 'http://127.0.0.1:81/'],
];

// [input, words the refusal must contain]
const refused: [string, RegExp][] = [
  ['', /Enter the channel's URL/],
  ['hooks.example.com/abc', /not an absolute URL/],
  ['/relative/path', /not an absolute URL/],
  ['https://', /not an absolute URL/],
  ['ftp://hooks.example.com/', /https:\/\/ only/],
  ['javascript:alert(1)', /https:\/\/ only/],
  ['file:///etc/passwd', /https:\/\/ only/],
  ['https://user:pass@hooks.example.com/', /user name or password/],
  ['https://user@hooks.example.com/', /user name or password/],
  ['https:\\\\user:pass@hooks.example.com/', /user name or password/],
  ['http://hooks.example.com/', /Plain http:\/\/ is refused.*use https/],
  ['http://8.8.8.8/', /Plain http:\/\/ is refused/],
  ['http://10.0.0.1/', /Plain http:\/\/ is refused/],
  ['http://localhost:8080/', /host name, not an IP address/],
  ['https://hooks.example.com:0/', /Port 0/],
  ['http://LOCALHOST./', /host name, not an IP address/],
  ['http://api.localhost/', /host name, not an IP address/],
  ['https://localhost/', /names this machine/],
  ['https://127.0.0.1/', /internal address \(loopback\)/],
  ['https://[::1]/', /internal address \(loopback\)/],
  ['https://10.1.2.3/', /internal address \(private\)/],
  ['https://172.16.5.4/', /internal address \(private\)/],
  ['https://192.168.1.1/', /internal address \(private\)/],
  ['https://100.64.0.1/', /internal address \(shared address space/],
  ['https://169.254.169.254/latest/meta-data/', /internal address \(link-local/],
  ['https://0.0.0.0/', /internal address \(this network\)/],
  ['https://[fe80::1]/', /internal address \(link-local\)/],
  ['https://[fd00::1]/', /internal address \(unique local/],
  ['https://[::]/', /internal address/],
  ['https://224.0.0.1/', /internal address \(multicast\)/],
  ['https://192.0.2.1/', /internal address \(documentation\)/],
  // Alternative IPv4 spellings.
  ['https://2130706433/', /127\.0\.0\.1 is an internal address/],
  ['https://0x7f.0.0.1/', /127\.0\.0\.1 is an internal address/],
  ['https://0177.0.0.1/', /127\.0\.0\.1 is an internal address/],
  ['https://127.1/', /127\.0\.0\.1 is an internal address/],
  ['https://0xa9fea9fe/', /169\.254\.169\.254 is an internal address/],
  ['https://3232235777/', /192\.168\.1\.1 is an internal address/],
  ['https://0300.0250.0.1/', /192\.168\.0\.1 is an internal address/],
  ['https://10.0.0.1./', /10\.0\.0\.1 is an internal address/],
  ['https://%31%30.0.0.1/', /10\.0\.0\.1 is an internal address/],
  ['https://１０.０.０.１/', /10\.0\.0\.1 is an internal address/],
  // IPv4 inside IPv6: mapped, NAT64, 6to4, IPv4-compatible.
  ['https://[::ffff:127.0.0.1]/', /internal address \(loopback \(IPv4 inside IPv6\)\)/],
  ['https://[::ffff:a9fe:a9fe]/', /internal address \(link-local.*IPv4 inside IPv6/],
  ['https://[0:0:0:0:0:ffff:10.0.0.1]/', /internal address \(private \(IPv4 inside IPv6\)\)/],
  ['https://[64:ff9b::169.254.169.254]/', /internal address \(link-local.*IPv4 inside IPv6/],
  ['https://[64:ff9b::10.0.0.1]/', /internal address \(private/],
  ['https://[2002:c0a8:101::1]/', /internal address \(private \(IPv4 inside IPv6\)\)/],
  ['https://[::127.0.0.1]/', /internal address/],
  ['https://[::10.0.0.1]/', /internal address/],
  // http to a loopback literal hidden in a non-loopback IPv6 form is not loopback.
  ['http://[::127.0.0.1]/', /Plain http:\/\/ is refused/],
  ['http://[64:ff9b::127.0.0.1]/', /Plain http:\/\/ is refused/],
  [`https://${'a'.repeat(2100)}.example.com/`, /at most 2048 characters/],
];

test('accepted channel URLs are stored in normalised form', () => {
  for (const [input, stored] of accepted) {
    assert.deepEqual(validateChannelUrl(input), { ok: true, url: stored }, input);
  }
});

test('refused channel URLs say why in plain words', () => {
  for (const [input, reason] of refused) {
    const result = validateChannelUrl(input);
    assert.equal(result.ok, false, `${input} should be refused`);
    if (!result.ok) assert.match(result.words, reason, input);
  }
});

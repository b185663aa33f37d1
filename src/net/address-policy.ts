// Which IP addresses a channel may reach: "globally reachable" decided by the IANA special-purpose
// registries as data (one table for validation and for delivery), parsed by ipaddr.js, never by string tests.
import ipaddr from 'ipaddr.js';

/** One special-purpose block: the CIDR and why it is not a public destination. */
interface Block {
  cidr: string;
  name: string;
}

/**
 * IPv4 blocks that are not globally reachable (IANA IPv4 Special-Purpose Address Registry, plus
 * multicast and the reserved 240/4). Blocks the registry marks global (e.g. 192.31.196.0/24) are left out;
 * 192.0.0.0/24 is kept whole although two /32s in it are global, which only errs on the side of refusing.
 */
const V4_BLOCKS: Block[] = [
  { cidr: '0.0.0.0/8', name: 'this network' },
  { cidr: '10.0.0.0/8', name: 'private' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local (includes the cloud metadata address)' },
  { cidr: '172.16.0.0/12', name: 'private' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', name: 'private' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation' },
  { cidr: '203.0.113.0/24', name: 'documentation' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast' },
];

/** IPv6 blocks that are not globally reachable (IANA IPv6 Special-Purpose Address Registry, plus multicast). */
const V6_BLOCKS: Block[] = [
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '2001::/23', name: 'IETF protocol assignments' },
  { cidr: '2001::/32', name: 'Teredo' },
  { cidr: '2001:2::/48', name: 'benchmarking' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '5f00::/16', name: 'segment routing' },
  { cidr: 'fc00::/7', name: 'unique local (private)' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

const parsedV4 = V4_BLOCKS.map((b) => ({ ...b, range: ipaddr.IPv4.parseCIDR(b.cidr) }));
const parsedV6 = V6_BLOCKS.map((b) => ({ ...b, range: ipaddr.IPv6.parseCIDR(b.cidr) }));
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** IPv6 forms that carry an IPv4 address inside: that address must pass too. */
const V4_CARRIERS: { range: [ipaddr.IPv6, number]; extract: (a: ipaddr.IPv6) => ipaddr.IPv4 }[] = [
  { range: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), extract: (a) => low32(a) }, // IPv4-mapped
  { range: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), extract: (a) => low32(a) }, // NAT64 well-known prefix
  { range: ipaddr.IPv6.parseCIDR('2002::/16'), extract: (a) => fromParts(a.parts[1]!, a.parts[2]!) }, // 6to4
];

function low32(a: ipaddr.IPv6): ipaddr.IPv4 {
  return fromParts(a.parts[6]!, a.parts[7]!);
}

function fromParts(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/** The verdict on one address: global, or the name of the special-purpose block it falls in. */
export type AddressVerdict = { global: true } | { global: false; reason: string };

/** Classifies an IP address literal (either family). Unparseable input is not global. */
export function classifyAddress(address: string): AddressVerdict {
  if (!ipaddr.isValid(address)) return { global: false, reason: 'not an IP address' };
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return classifyV4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  for (const carrier of V4_CARRIERS) {
    if (v6.match(carrier.range)) {
      const inner = classifyV4(carrier.extract(v6));
      return inner.global ? inner : { global: false, reason: `${inner.reason} (IPv4 inside IPv6)` };
    }
  }
  for (const b of parsedV6) if (v6.match(b.range)) return { global: false, reason: b.name };
  if (!v6.match(GLOBAL_UNICAST_V6)) return { global: false, reason: 'not global unicast' };
  return { global: true };
}

function classifyV4(a: ipaddr.IPv4): AddressVerdict {
  for (const b of parsedV4) if (a.match(b.range)) return { global: false, reason: b.name };
  return { global: true };
}

/** True when the address is globally reachable. */
export function isGloballyReachable(address: string): boolean {
  return classifyAddress(address).global;
}

/** True when the address is a loopback address of either family (including IPv4-mapped loopback). */
export function isLoopbackAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}

/**
 * If a URL hostname (as normalised by the WHATWG URL parser, which already turns 0x7f.1, 2130706433 and
 * other IPv4 spellings into dotted quads) is an IP literal, returns the bare address; otherwise undefined.
 */
export function ipLiteralOfHostname(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (ipaddr.IPv6.isValid(bare) && bare.includes(':')) return bare;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return bare;
  return undefined;
}

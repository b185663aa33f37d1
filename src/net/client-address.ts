// Who the client is, for throttling: the socket peer, or, only when that peer is a proxy the operator listed in
// SVC_TRUSTED_PROXIES, the right-most X-Forwarded-For entry that is not itself a trusted proxy. Parsed by ipaddr.js.
import ipaddr from 'ipaddr.js';

/** A parsed list of trusted proxy ranges. */
export type TrustedProxies = [ipaddr.IPv4 | ipaddr.IPv6, number][];

/** Parses "10.0.0.1, 192.168.0.0/16, fd00::/8"; returns undefined when an entry is not an address or CIDR. */
export function parseTrustedProxies(text: string): TrustedProxies | undefined {
  const out: TrustedProxies = [];
  for (const raw of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (raw.includes('/')) {
      if (!isCidr(raw)) return undefined;
      out.push(ipaddr.parseCIDR(raw));
    } else if (ipaddr.isValid(raw)) {
      const a = ipaddr.process(raw);
      out.push([a, a.kind() === 'ipv4' ? 32 : 128]);
    } else return undefined;
  }
  return out;
}

function isCidr(raw: string): boolean {
  try {
    ipaddr.parseCIDR(raw);
    return true;
  } catch {
    return false;
  }
}

function trusted(address: ipaddr.IPv4 | ipaddr.IPv6, proxies: TrustedProxies): boolean {
  return proxies.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits));
}

/** The client address for a request, normalised (IPv4-mapped IPv6 becomes IPv4); 'unknown' when unparseable. */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | undefined,
  proxies: TrustedProxies,
): string {
  if (!peer || !ipaddr.isValid(peer)) return 'unknown';
  let address = ipaddr.process(peer);
  if (forwardedFor && trusted(address, proxies)) {
    const hops = forwardedFor.split(',').map((s) => s.trim());
    for (let i = hops.length - 1; i >= 0; i--) {
      if (!ipaddr.isValid(hops[i]!)) break;
      address = ipaddr.process(hops[i]!);
      if (!trusted(address, proxies)) break;
    }
  }
  return address.toString();
}

/** The bucket an address is throttled in: the address itself for IPv4, its /64 for IPv6 (one subscriber's prefix). */
export function throttleBucket(address: string): string {
  if (!ipaddr.IPv6.isValid(address) || !address.includes(':')) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

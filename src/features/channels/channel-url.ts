// Channel URL rules: an absolute https:// URL, or http:// only to a loopback IP address literal;
// no loopback host names, no internal IP literals, no user names or passwords. Hosts are judged after the
// WHATWG URL parser has normalised them (so 0x7f.1, 2130706433 and [::ffff:7f00:1] are seen as the addresses
// they are), and addresses are judged by the IANA table in net/address-policy.ts.
import { classifyAddress, ipLiteralOfHostname, isLoopbackAddress } from '../../net/address-policy.ts';

/** Longest URL accepted. */
export const CHANNEL_URL_MAX = 2048;

export type ChannelUrlResult = { ok: true; url: string } | { ok: false; reason: string };

const HTTP_HINT = 'http:// is only allowed to a loopback IP address such as http://127.0.0.1:8080/ or http://[::1]:8080/';

// RFC 6761: "localhost" and every name under it always mean this machine.
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Validates and normalises a channel URL; every refusal says why in plain words. */
export function validateChannelUrl(input: string): ChannelUrlResult {
  const raw = input.trim();
  if (raw === '') return { ok: false, reason: "Enter the channel's URL." };
  if (raw.length > CHANNEL_URL_MAX) return { ok: false, reason: `The URL may be at most ${CHANNEL_URL_MAX} characters.` };
  if (!/^[a-z][a-z0-9+.-]*:/i.test(raw) || !URL.canParse(raw)) {
    return { ok: false, reason: 'This is not an absolute URL. Enter the full address, starting with https://.' };
  }
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: `Channels are reached over https:// only (${url.protocol} was given).` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'The URL may not contain a user name or password (user:password@host). Use the channel secret instead.' };
  }
  if (url.hostname === '') return { ok: false, reason: 'The URL has no host.' };
  if (url.port === '0') return { ok: false, reason: 'Port 0 cannot be connected to; give the port the receiver listens on.' };
  const ip = ipLiteralOfHostname(url.hostname);
  if (url.protocol === 'http:') {
    if (ip !== undefined && isLoopbackAddress(ip)) return { ok: true, url: url.href };
    if (isLocalhostName(url.hostname)) {
      return { ok: false, reason: `"${url.hostname}" is a host name, not an IP address; ${HTTP_HINT}.` };
    }
    return { ok: false, reason: `Plain http:// is refused for ${url.hostname}: use https://. ${HTTP_HINT}.` };
  }
  if (isLocalhostName(url.hostname)) {
    return { ok: false, reason: `"${url.hostname}" names this machine, which is an internal address. Channels must point at a publicly reachable host.` };
  }
  if (ip !== undefined) {
    const verdict = classifyAddress(ip);
    if (!verdict.global) {
      return { ok: false, reason: `${ip} is an internal address (${verdict.reason}). Channels must point at a publicly reachable host.` };
    }
  }
  return { ok: true, url: url.href };
}

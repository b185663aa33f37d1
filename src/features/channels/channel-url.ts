// Channel URL rules: an absolute https:// URL, or http:// only to a loopback IP address literal;
// no loopback host names, no internal IP literals, no user names or passwords. Hosts are judged after the
// WHATWG URL parser has normalised them (so 0x7f.1, 2130706433 and [::ffff:7f00:1] are seen as the addresses
// they are), and addresses are judged by the IANA table in net/address-policy.ts.
import { classifyAddress, ipLiteralOfHostname, isLoopbackAddress } from '../../net/address-policy.ts';
import { wordsOf } from '../refusals.ts';
import { CHANNEL_URL_REFUSALS, type ChannelUrlReason, type UrlFacts } from './channels.refusals.ts';

/** Longest URL accepted. */
export const CHANNEL_URL_MAX = 2048;

export type ChannelUrlResult = { ok: true; url: string } | { ok: false; reason: ChannelUrlReason; words: string };

/** A refusal of `reason`, in its catalogue's words. */
function refused(reason: ChannelUrlReason, facts: Partial<UrlFacts> = {}): ChannelUrlResult {
  return {
    ok: false,
    reason,
    words: wordsOf(CHANNEL_URL_REFUSALS[reason], { protocol: '', host: '', ip: '', range: '', ...facts }),
  };
}

// RFC 6761: "localhost" and every name under it always mean this machine.
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Validates and normalises a channel URL; every refusal says why in plain words (channels.refusals.ts). */
export function validateChannelUrl(input: string): ChannelUrlResult {
  const raw = input.trim();
  if (raw === '') return refused('missing');
  if (raw.length > CHANNEL_URL_MAX) return refused('too-long');
  if (!/^[a-z][a-z0-9+.-]*:/i.test(raw) || !URL.canParse(raw)) return refused('not-absolute');
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refused('not-web', { protocol: url.protocol });
  if (url.username !== '' || url.password !== '') return refused('credentials');
  if (url.hostname === '') return refused('no-host');
  if (url.port === '0') return refused('port-zero');
  const ip = ipLiteralOfHostname(url.hostname);
  if (url.protocol === 'http:') {
    if (ip !== undefined && isLoopbackAddress(ip)) return { ok: true, url: url.href };
    return refused(isLocalhostName(url.hostname) ? 'http-host-name' : 'http-not-loopback', { host: url.hostname });
  }
  if (isLocalhostName(url.hostname)) return refused('this-machine', { host: url.hostname });
  if (ip !== undefined) {
    const verdict = classifyAddress(ip);
    if (!verdict.global) return refused('internal-address', { ip, range: verdict.reason });
  }
  return { ok: true, url: url.href };
}

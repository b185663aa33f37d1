// Facts about the incoming request that several routes need, derived in one place.
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.ts';
import type { Ctx } from './env.ts';

/** The client's address from the socket (never from forwarding headers), normalised by ipaddr.js. */
export function clientAddress(c: Ctx): string {
  const raw = c.env?.incoming?.socket?.remoteAddress;
  if (!raw || !ipaddr.isValid(raw)) return 'unknown';
  return ipaddr.process(raw).toString();
}

/** The origin this service is reached at: SVC_EXTERNAL_URL, else the request's own host (https when secure cookies are on). */
export function externalOrigin(c: Ctx, config: Config): string {
  if (config.externalUrl) return new URL(config.externalUrl).origin;
  const url = new URL(c.req.url);
  if (config.secureCookies) url.protocol = 'https:';
  return url.origin;
}

/** The User-Agent, bounded, for the session list. */
export function userAgent(c: Ctx): string {
  return (c.req.header('user-agent') ?? '').slice(0, 300);
}

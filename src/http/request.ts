// Facts about the incoming request that several routes need, derived in one place.
import type { Config } from '../config.ts';
import { clientAddressOf } from '../net/client-address.ts';
import type { Ctx } from './env.ts';

/** The client's address: the socket peer, or X-Forwarded-For only through a proxy listed in SVC_TRUSTED_PROXIES. */
export function clientAddress(c: Ctx): string {
  return clientAddressOf(
    c.env?.incoming?.socket?.remoteAddress,
    c.req.header('x-forwarded-for'),
    c.get('deps').config.trustedProxies,
  );
}

/**
 * The origin this service is reached at: SVC_EXTERNAL_URL, else the request's own host (https when secure cookies are
 * on).
 */
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

// The session cookie's name and attributes, in one place.
import type { HttpBindings } from '@hono/node-server';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { Config } from '../config.ts';
import type { Ctx } from './env.ts';

/** Session cookie name: __Host- prefixed when cookies are Secure. */
export function sessionCookieName(config: Config): string {
  return config.secureCookies ? '__Host-svc_session' : 'svc_session';
}

/** Reads the session cookie (on every request). */
export function readSessionCookie(c: Ctx, config: Config): string | undefined {
  // Under the Node server the parsed request headers are at hand; asking the Request for one header would first
  // copy all of them into a Headers object.
  const header = (c.env as Partial<HttpBindings> | undefined)?.incoming?.headers?.cookie ?? c.req.header('cookie');
  if (!header) return undefined;
  return cookieValue(header, sessionCookieName(config));
}

/**
 * The value of the first cookie called `name` in a Cookie header (`a=b; c=d`), whitespace trimmed, or undefined.
 * Read on every request, so it scans the header in place instead of parsing every cookie into an object, in one pass
 * over the header whatever its shape. The value is taken as sent (no quote stripping, no percent-decoding): the
 * session id is base64url, and resolveSession refuses anything else, so an odd value signs nobody in.
 */
export function cookieValue(header: string, name: string): string | undefined {
  if (!header.includes(name)) return undefined;
  for (let at = 0; at < header.length; ) {
    let end = header.indexOf(';', at);
    if (end === -1) end = header.length;
    const eq = header.indexOf('=', at);
    if (eq === -1) return undefined;
    if (eq > end) {
      // Pairs without "=" up to the one holding it: go straight to that pair.
      at = header.lastIndexOf(';', eq) + 1;
      continue;
    }
    if (header.slice(at, eq).trim() === name) return header.slice(eq + 1, end).trim();
    at = end + 1;
  }
  return undefined;
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, path /, Secure when configured; a browser-session cookie. */
export function writeSessionCookie(c: Ctx, config: Config, value: string): void {
  setCookie(c, sessionCookieName(config), value, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: config.secureCookies,
  });
}

/** Clears the session cookie. */
export function clearSessionCookie(c: Ctx, config: Config): void {
  deleteCookie(c, sessionCookieName(config), { path: '/', secure: config.secureCookies });
}

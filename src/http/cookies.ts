// The session cookie's name and attributes, in one place.
import type { HttpBindings } from '@hono/node-server';
import { deleteCookie, setCookie } from 'hono/cookie';
import { parse } from 'hono/utils/cookie';
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
  const name = sessionCookieName(config);
  return parse(header, name)[name];
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

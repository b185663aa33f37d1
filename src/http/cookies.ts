// The session cookie's name and attributes, in one place.
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Config } from '../config.ts';
import type { Ctx } from './env.ts';

/** Session cookie name: __Host- prefixed when cookies are Secure. */
function sessionCookieName(config: Config): string {
  return config.secureCookies ? '__Host-svc_session' : 'svc_session';
}

/** Reads the session cookie (resolveSession refuses any value that is not a session id's shape). */
export function readSessionCookie(c: Ctx, config: Config): string | undefined {
  return getCookie(c, sessionCookieName(config));
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

// The session and device cookies' names and attributes, in one place.
import { deleteCookie, getCookie, getSignedCookie, setCookie, setSignedCookie } from 'hono/cookie';
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

/** Device cookie name: __Host- prefixed when cookies are Secure, like the session cookie. */
function deviceCookieName(config: Config): string {
  return config.secureCookies ? '__Host-svc_device' : 'svc_device';
}

/**
 * Reads the device cookie's value if its signature verifies (undefined when absent, unsigned or tampered).
 * The key is asked for only when the cookie is present, so requests without one read nothing.
 */
export async function readDeviceCookie(
  c: Ctx,
  config: Config,
  key: () => Promise<string | undefined>,
): Promise<string | undefined> {
  const name = deviceCookieName(config);
  if (getCookie(c, name) === undefined) return undefined;
  const secret = await key();
  if (!secret) return undefined;
  const value = await getSignedCookie(c, secret, name);
  return typeof value === 'string' ? value : undefined;
}

/** Sets the signed device cookie: HttpOnly, SameSite=Lax, path /, Secure when configured, kept for maxAgeMs. */
export async function writeDeviceCookie(
  c: Ctx,
  config: Config,
  key: string,
  value: string,
  maxAgeMs: number,
): Promise<void> {
  await setSignedCookie(c, deviceCookieName(config), value, key, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: config.secureCookies,
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

/** The pending passkey sign-in's cookie name: __Host- prefixed when cookies are Secure. */
function passkeySignInCookieName(config: Config): string {
  return config.secureCookies ? '__Host-svc_passkey' : 'svc_passkey';
}

/** Reads the pending passkey sign-in's random value (its challenge is held under the value's SHA-256). */
export function readPasskeySignInCookie(c: Ctx, config: Config): string | undefined {
  return getCookie(c, passkeySignInCookieName(config));
}

/**
 * Sets the pending passkey sign-in's cookie: HttpOnly, SameSite=Strict (only the sign-in page's own form answers it),
 * path /, Secure when configured, for as long as its challenge lives.
 */
export function writePasskeySignInCookie(c: Ctx, config: Config, value: string, maxAgeMs: number): void {
  setCookie(c, passkeySignInCookieName(config), value, {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/',
    secure: config.secureCookies,
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

/** Clears the pending passkey sign-in's cookie (its challenge is spent). */
export function clearPasskeySignInCookie(c: Ctx, config: Config): void {
  deleteCookie(c, passkeySignInCookieName(config), { path: '/', secure: config.secureCookies });
}

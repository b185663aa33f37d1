// The flow cookie: state, nonce, PKCE verifier, provider and kind between the start and the callback.
// Signed (HMAC, key shared through the database), HttpOnly, SameSite=Lax (sent on the provider's top-level redirect
// back). And the sign-out cookie: the handle of a sign-out at the provider, between signing out and going there.
import { deleteCookie, getCookie, getSignedCookie, setCookie, setSignedCookie } from 'hono/cookie';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { FLOW_TTL_MS, flowCookieKey, type FlowState } from './sso.flow.service.ts';
import { SIGN_OUT_TTL_MS } from './sso.logout.service.ts';

const flowSchema = z.object({
  state: z.string(),
  nonce: z.string(),
  verifier: z.string(),
  providerId: z.string(),
  kind: z.enum(['login', 'link']),
  accountId: z.string().optional(),
  expiresAt: z.number(),
});

function cookieName(deps: Deps): string {
  return deps.config.secureCookies ? '__Host-svc_sso_flow' : 'svc_sso_flow';
}

/** Stores a started flow in the browser for up to FLOW_TTL_MS. */
export async function writeFlowCookie(c: Ctx, deps: Deps, flow: FlowState): Promise<void> {
  await setSignedCookie(c, cookieName(deps), JSON.stringify(flow), await flowCookieKey(deps), {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: deps.config.secureCookies,
    maxAge: FLOW_TTL_MS / 1000,
  });
}

/** Reads the flow (undefined when absent, forged or malformed) and clears the cookie: it is good for one callback. */
export async function takeFlowCookie(c: Ctx, deps: Deps): Promise<FlowState | undefined> {
  const raw = await getSignedCookie(c, await flowCookieKey(deps), cookieName(deps));
  deleteCookie(c, cookieName(deps), { path: '/', secure: deps.config.secureCookies });
  if (typeof raw !== 'string') return undefined;
  try {
    const parsed = flowSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function signOutCookieName(deps: Deps): string {
  return deps.config.secureCookies ? '__Host-svc_sso_sign_out' : 'svc_sso_sign_out';
}

/** Gives the browser the handle of its sign-out at the provider (random, so unsigned), for SIGN_OUT_TTL_MS. */
export function writeSignOutCookie(c: Ctx, deps: Deps, handle: string): void {
  setCookie(c, signOutCookieName(deps), handle, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: deps.config.secureCookies,
    maxAge: SIGN_OUT_TTL_MS / 1000,
  });
}

/** Reads the sign-out handle (undefined when absent) and clears the cookie: it is good for one sign-out. */
export function takeSignOutCookie(c: Ctx, deps: Deps): string | undefined {
  const handle = getCookie(c, signOutCookieName(deps));
  deleteCookie(c, signOutCookieName(deps), { path: '/', secure: deps.config.secureCookies });
  return handle;
}

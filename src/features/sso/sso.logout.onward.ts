// What signing out needs from single sign-on, wired into the sign-in feature's POST /logout by app.ts: for a session a
// provider opened, the sign-out at that provider made ready and the path on this site that sends the browser there.
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import type { SessionOrigin } from '../auth/sessions.service.ts';
import { externalOrigin } from '../../http/request.ts';
import { writeSignOutCookie } from './sso.cookie.ts';
import { prepareProviderSignOut } from './sso.logout.service.ts';
import { postLogoutRedirectUri } from './sso.urls.ts';

/**
 * Called after a session the provider opened ended, with how it was opened: when its provider signs out there too,
 * gives this browser the handle and returns where it continues (GET /login/sso/<slug>/sign-out) and the provider's
 * name; otherwise undefined.
 */
export async function ssoSignOutOnward(
  deps: Deps,
  c: Ctx,
  origin: SessionOrigin,
): Promise<{ path: string; at: string } | undefined> {
  const prepared = await prepareProviderSignOut(deps, origin, postLogoutRedirectUri(externalOrigin(c, deps.config)));
  if (!prepared) return undefined;
  writeSignOutCookie(c, deps, prepared.handle);
  return { path: `/login/sso/${prepared.provider.slug}/sign-out`, at: prepared.provider.display_name };
}

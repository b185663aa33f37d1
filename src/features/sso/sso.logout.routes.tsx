// Signing out with the provider: GET /login/sso/:slug/sign-out sends a browser that just signed out of svc on to the
// provider's end-session endpoint; POST /login/sso/:slug/backchannel-logout takes the provider's logout tokens
// (server to server: no session, no form token, the signed token is the credential).
import { Hono } from 'hono';
import type { Deps } from '../../deps.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { errorPage } from '../../http/render.tsx';
import { backchannelLogout } from './sso.backchannel.service.ts';
import { takeSignOutCookie } from './sso.cookie.ts';
import { takeProviderSignOut } from './sso.logout.service.ts';
import { BACKCHANNEL_REFUSALS } from './sso.refusals.ts';
import { SLUG_PATTERN } from './sso.schema.ts';

/** The `logout_token` form field of a urlencoded UTF-8 body; '' when the body is anything else. */
async function logoutTokenOf(c: Ctx): Promise<string> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return '';
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer());
    return new URLSearchParams(text).get('logout_token') ?? '';
  } catch {
    return '';
  }
}

export function ssoLogoutRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  // The end-session URL carries the id_token as its hint: it leaves only in this Location header, never in a page.
  app.get('/login/sso/:slug/sign-out', async (c) => {
    const slug = c.req.param('slug');
    const handle = takeSignOutCookie(c, deps);
    if (!SLUG_PATTERN.test(slug)) return errorPage(c, 404, 'Not found', 'There is no sign-in option at this address.');
    const url = await takeProviderSignOut(deps, slug, handle);
    return c.redirect(url ?? '/login?notice=signed-out', 303);
  });

  app.post('/login/sso/:slug/backchannel-logout', async (c) => {
    const result = await backchannelLogout(deps, c.req.param('slug'), await logoutTokenOf(c));
    c.header('Cache-Control', 'no-store');
    if (result.ok) return c.body(null, 200);
    const refusal = BACKCHANNEL_REFUSALS[result.reason];
    return c.json({ error: refusal.error, error_description: refusal.words }, refusal.status);
  });

  return app;
}

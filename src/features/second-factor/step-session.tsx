// The pending session of the second-factor step and enrolment offer, as their routes (codes and passkeys) handle it:
// reached only in its own stage, shown the step with the factors its account has, promoted to full once the step is
// passed, or ended when it must start over.
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import { render } from '../../http/render.tsx';
import { clearSessionCookie, writeSessionCookie } from '../../http/cookies.ts';
import { inSession, type Ctx } from '../../http/env.ts';
import { issueDeviceTokenForSession } from '../auth/device.ts';
import { rememberDevice } from '../auth/device-cookie.ts';
import { landingFor } from '../auth/landing.ts';
import { endSession, promoteSession, type SessionContext, type Stage } from '../auth/sessions.service.ts';
import type { Factors } from './factors.ts';
import { factorsOfAccount } from './second-factor.service.ts';
import { TotpStepPage } from './second-factor.views.tsx';

/** The session when it is in `stage`; otherwise the redirect to where it belongs. */
export function sessionIn(c: Ctx, stage: Stage): SessionContext | Response {
  const session = inSession(c);
  return session.stage === stage ? session : c.redirect(landingFor(session.stage), 303);
}

/** The account's second factor changed under a pending session (admin re-enrolment, enrolment elsewhere): start over. */
export async function startOver(deps: Deps, c: Ctx, session: SessionContext): Promise<Response> {
  await endSession(deps, session.idHash);
  clearSessionCookie(c, deps.config);
  return c.redirect('/login?notice=session-ended', 303);
}

/**
 * Signs the pending session in fully under a new id and cookie, and only now marks the browser as known to the
 * account (the device cookie); the new cookie value, or undefined when the session ended meanwhile.
 */
export async function promote(deps: Deps, c: Ctx, session: SessionContext): Promise<string | undefined> {
  const promoted = await promoteSession(deps, session);
  if (!promoted) return undefined;
  writeSessionCookie(c, deps.config, promoted.cookie);
  c.set('session', promoted.session);
  await rememberDevice(c, deps, await issueDeviceTokenForSession(deps, promoted.session.idHash));
  return promoted.cookie;
}

/**
 * The second-factor step for this session, offering what its account has (a passkey, TOTP, recovery codes); `error`
 * may depend on those factors.
 */
export async function stepPage(
  deps: Deps,
  c: Ctx,
  session: SessionContext,
  error?: string | ((factors: Factors) => string),
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  const factors = await factorsOfAccount(deps, session.account.id);
  const words = typeof error === 'function' ? error(factors) : error;
  return render(c, 'Two-factor authentication', <TotpStepPage error={words} factors={factors} />, status, {
    ceremony: factors.passkeys > 0,
  });
}

// GET/POST /login and POST /logout.
import { setTimeout } from 'node:timers/promises';
import { Hono } from 'hono';
import type { Child } from 'hono/jsx';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { clearSessionCookie, writeSessionCookie } from '../../http/cookies.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { clientAddress, userAgent } from '../../http/request.ts';
import { issueDeviceToken } from './device.ts';
import { presentedDevice, rememberDevice } from './device-cookie.ts';
import { landingFor } from './landing.ts';
import { lockedMessage, LOGIN_NOTICES, LoginPage, SetupPendingPage, SignOutOnwardPage } from './login.views.tsx';
import { createSession, endSession, stageAfterFirstFactor } from './sessions.service.ts';
import { signInWithPassword } from './signin.service.ts';

// parseForm refuses control characters in any field (PostgreSQL refuses NUL): such a form is signed in as the empty
// name, so it gets the usual answer and counts like any failure.
/** Shown only after the right password for a suspended account (a wrong one gets the usual answer). */
const SUSPENDED_MESSAGE = 'This account is suspended, so it cannot sign in. Ask an administrator to reactivate it.';

const loginSchema = z.object({ username: z.string().max(256).default(''), password: z.string().max(1024).default('') });

/** What the sign-in page shows that features above this one decide, wired in by app.ts. */
export interface SignInPageParts {
  /** True while no account exists yet (first run): the page then says where the setup link is instead. */
  setupPending(deps: Deps): Promise<boolean>;
  /** Other ways in, shown under the password form (the single sign-on providers' buttons). */
  otherWaysIn(deps: Deps): Promise<Child>;
  /**
   * Asked as the session `idHash` signs out, before it ends: where the browser goes next to sign out at the identity
   * provider that opened it (a path on this site, and the provider's name), or undefined when signing out stays local.
   */
  signOutOnward(deps: Deps, c: Ctx, idHash: string): Promise<{ path: string; at: string } | undefined>;
}

export function loginRoutes(deps: Deps, parts: SignInPageParts) {
  const app = new Hono<AppEnv>();

  app.get('/login', refuseControlQuery, async (c) => {
    const session = c.get('session');
    if (session) return c.redirect(landingFor(session.stage), 303);
    // First run: no account to sign in to yet, so say where the setup link is instead of offering a sign-in form.
    if (await parts.setupPending(deps)) return render(c, 'Setup pending', <SetupPendingPage />);
    // Back from signing out at an identity provider, which adds the `state` svc sent (nothing to check it for).
    const key = c.req.query('notice') ?? (c.req.query('state') !== undefined ? 'signed-out' : '');
    const notice = Object.hasOwn(LOGIN_NOTICES, key) ? LOGIN_NOTICES[key] : undefined;
    const sso = await parts.otherWaysIn(deps);
    return render(c, 'Sign in', <LoginPage notice={notice} extra={sso} />);
  });

  app.post('/login', async (c) => {
    const form = parseForm(c, loginSchema);
    const input = form.ok ? form.data : { username: '', password: '' };
    const device = await presentedDevice(c, deps);
    const result = await signInWithPassword(deps, { ...input, address: clientAddress(c), device });
    // A refusal costs no password check, so a flood of them would be answered as fast as it comes: pace it instead.
    if (!result.ok && result.reason === 'locked') await setTimeout(deps.config.refusedSignInDelayMs);
    if (!result.ok) {
      const error =
        result.reason === 'locked'
          ? lockedMessage(result.retryAfterMs)
          : result.reason === 'suspended'
            ? SUSPENDED_MESSAGE
            : 'Incorrect username or password.';
      const sso = await parts.otherWaysIn(deps);
      const status = result.reason === 'locked' ? 429 : result.reason === 'suspended' ? 403 : 401;
      return render(
        c,
        'Sign in',
        <LoginPage username={input.username.slice(0, 64)} error={error} extra={sso} />,
        status,
      );
    }
    const previous = c.get('session');
    if (previous) await endSession(deps, previous.idHash);
    const stage = stageAfterFirstFactor(result.account);
    // The credentials version read with the verified hash: a password change racing this sign-in voids the session.
    const cookie = await createSession(
      deps,
      result.account.id,
      stage,
      userAgent(c),
      result.account.credentials_version,
    );
    writeSessionCookie(c, deps.config, cookie);
    // Renewed at each full sign-in: this browser is now known to the account, so a lock on its name will not keep it
    // out. With a second factor owed, it is set only once that step is passed (second-factor.routes.tsx).
    if (stage === 'full') await rememberDevice(c, deps, issueDeviceToken(deps, result.account));
    return c.redirect(landingFor(stage), 303);
  });

  app.post('/logout', async (c) => {
    const session = c.get('session');
    const onward = session ? await parts.signOutOnward(deps, c, session.idHash) : undefined;
    if (session) await endSession(deps, session.idHash);
    clearSessionCookie(c, deps.config);
    if (!onward) return c.redirect('/login?notice=signed-out', 303);
    c.set('session', undefined);
    // Not a redirect: the page's CSP (form-action 'self') refuses a form post's redirect to another site, Chromium's
    // too. A refresh is a new navigation of its own.
    c.header('Refresh', `0; url=${onward.path}`);
    return render(c, 'Signing out', <SignOutOnwardPage path={onward.path} at={onward.at} />);
  });

  return app;
}

// GET/POST /login, sign-in with a passkey (POST /login/passkey/options, then POST /login/passkey), and POST /logout.
import { setTimeout } from 'node:timers/promises';
import { Hono } from 'hono';
import type { Child } from 'hono/jsx';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { randomToken } from '../../deps.ts';
import {
  clearPasskeySignInCookie,
  clearSessionCookie,
  readPasskeySignInCookie,
  writePasskeySignInCookie,
  writeSessionCookie,
} from '../../http/cookies.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { clientAddress, externalOrigin, userAgent } from '../../http/request.ts';
import type { Account } from './accounts.repo.ts';
import { issueDeviceToken } from './device.ts';
import { presentedDevice, rememberDevice } from './device-cookie.ts';
import { landingFor } from './landing.ts';
import { lockedMessage, LOGIN_NOTICES, LoginPage, SetupPendingPage, SignOutOnwardPage } from './login.views.tsx';
import { createSession, endSession, sessionOrigin, type SessionOrigin, type Stage } from './sessions.service.ts';
import { signInWithPassword, type OwesSecondFactor, type PasskeySignIn } from './signin.service.ts';

// parseForm refuses control characters in any field (PostgreSQL refuses NUL): such a form is signed in as the empty
// name, so it gets the usual answer and counts like any failure.
/** Shown only after the right password for a suspended account (a wrong one gets the usual answer). */
const SUSPENDED_MESSAGE = 'This account is suspended, so it cannot sign in. Ask an administrator to reactivate it.';

const loginSchema = z.object({ username: z.string().max(256).default(''), password: z.string().max(1024).default('') });
const passkeySchema = z.object({ answer: z.string().max(4096).default('') });

/** What the sign-in page shows that features above this one decide, wired in by app.ts. */
export interface SignInPageParts {
  /** True while no account exists yet (first run): the page then says where the setup link is instead. */
  setupPending(deps: Deps): Promise<boolean>;
  /** Other ways in, shown under the password form (the single sign-on providers' buttons). */
  otherWaysIn(deps: Deps): Promise<Child>;
  /**
   * Asked after a session opened through single sign-on has ended, with how it was opened (read before it ended):
   * where the browser goes next to sign out at the identity provider that opened it (a path on this site, and the
   * provider's name), or undefined when signing out stays local.
   */
  signOutOnward(deps: Deps, c: Ctx, origin: SessionOrigin): Promise<{ path: string; at: string } | undefined>;
  /** Whether an account that gave its password owes a second factor (it has TOTP or a passkey). */
  owesSecondFactor: OwesSecondFactor;
  /** Sign-in with a passkey, which the second-factor feature verifies. */
  passkey: PasskeySignIn;
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
    return render(c, 'Sign in', <LoginPage notice={notice} extra={sso} />, 200, { ceremony: true });
  });

  /** The sign-in page again, with a refusal. */
  async function refused(c: Ctx, error: string, status: 400 | 401 | 403 | 409 | 429, username?: string) {
    const sso = await parts.otherWaysIn(deps);
    return render(c, 'Sign in', <LoginPage username={username} error={error} extra={sso} />, status, {
      ceremony: true,
    });
  }

  /**
   * Starts the session of an account that passed its first factor (or both, with a passkey): a new id at every
   * sign-in, any earlier session of this browser ended. A full sign-in also renews the device cookie: this browser is
   * now known to the account, so a lock on its name will not keep it out. With a second factor owed, that cookie is
   * set only once the step is passed (second-factor.routes.tsx). Returns where the browser goes next.
   */
  async function startSession(c: Ctx, account: Account, stage: Stage): Promise<string> {
    const previous = c.get('session');
    if (previous) await endSession(deps, previous.idHash);
    // The credentials version read with the verified secret: a password change racing this sign-in voids the session.
    const cookie = await createSession(deps, account.id, stage, userAgent(c), account.credentials_version);
    writeSessionCookie(c, deps.config, cookie);
    if (stage === 'full') await rememberDevice(c, deps, issueDeviceToken(deps, account));
    return landingFor(stage);
  }

  app.post('/login', async (c) => {
    const form = parseForm(c, loginSchema);
    const input = form.ok ? form.data : { username: '', password: '' };
    const device = await presentedDevice(c, deps);
    const result = await signInWithPassword(
      deps,
      { ...input, address: clientAddress(c), device },
      parts.owesSecondFactor,
    );
    // A refusal costs no password check, so a flood of them would be answered as fast as it comes: pace it instead.
    if (!result.ok && result.reason === 'locked') await setTimeout(deps.config.refusedSignInDelayMs);
    if (!result.ok) {
      const error =
        result.reason === 'locked'
          ? lockedMessage(result.retryAfterMs)
          : result.reason === 'suspended'
            ? SUSPENDED_MESSAGE
            : 'Incorrect username or password.';
      const status = result.reason === 'locked' ? 429 : result.reason === 'suspended' ? 403 : 401;
      return refused(c, error, status, input.username.slice(0, 64));
    }
    return c.redirect(await startSession(c, result.account, result.stage), 303);
  });

  // The passkey ceremony's options, asked for by the ceremony script when the holder presses "Sign in with a passkey":
  // the challenge is held for this browser's pending sign-in, a random value in its own short-lived cookie. A refusal
  // (a locked address, too many pending sign-ins) holds nothing; the script shows its words beside the button.
  app.post('/login/passkey/options', async (c) => {
    const pending = randomToken(deps.random, 32);
    const result = await parts.passkey.options(deps, {
      pending,
      origin: externalOrigin(c, deps.config),
      address: clientAddress(c),
    });
    if (!result.ok) {
      if (result.status === 429) await setTimeout(deps.config.refusedSignInDelayMs);
      c.header('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      return c.json({ error: result.words }, result.status);
    }
    writePasskeySignInCookie(c, deps.config, pending, parts.passkey.ttlMs);
    return c.json({ options: result.options });
  });

  // The answer: one step, no password, no further code. The pending sign-in's challenge is spent whatever the outcome.
  app.post('/login/passkey', async (c) => {
    const form = parseForm(c, passkeySchema);
    const pending = readPasskeySignInCookie(c, deps.config);
    clearPasskeySignInCookie(c, deps.config);
    const result = await parts.passkey.signIn(deps, {
      pending,
      origin: externalOrigin(c, deps.config),
      answer: form.ok ? form.data.answer : '',
      address: clientAddress(c),
    });
    if (!result.ok && result.status === 429) await setTimeout(deps.config.refusedSignInDelayMs);
    if (!result.ok) return refused(c, result.words, result.status);
    return c.redirect(await startSession(c, result.account, 'full'), 303);
  });

  /**
   * Where the browser goes to sign out at the provider that opened the ended session; undefined when signing out stays
   * local, also when preparing that failed (logged without the error's text, which could hold what it was given).
   */
  const onwardAfter = async (c: Ctx, origin: SessionOrigin) => {
    try {
      return await parts.signOutOnward(deps, c, origin);
    } catch (err) {
      const e = err as { name?: unknown; code?: unknown };
      deps.log.warn(
        { error: { name: String(e.name), code: e.code === undefined ? undefined : String(e.code) } },
        'sign-out: the sign-out at the provider could not be prepared, so it stayed local to svc',
      );
      return undefined;
    }
  };

  // The session ends before the provider is contacted (its discovery may take seconds, or fail): what signing out
  // there needs is read first and kept in memory, so nothing that happens there can keep the session alive.
  app.post('/logout', async (c) => {
    const session = c.get('session');
    const origin = session ? await sessionOrigin(deps, session.idHash) : undefined;
    if (session) await endSession(deps, session.idHash);
    clearSessionCookie(c, deps.config);
    const onward = origin ? await onwardAfter(c, origin) : undefined;
    if (!onward) return c.redirect('/login?notice=signed-out', 303);
    c.set('session', undefined);
    // Not a redirect: the page's CSP (form-action 'self') refuses a form post's redirect to another site, Chromium's
    // too. A refresh is a new navigation of its own.
    c.header('Refresh', `0; url=${onward.path}`);
    return render(c, 'Signing out', <SignOutOnwardPage path={onward.path} at={onward.at} />);
  });

  return app;
}

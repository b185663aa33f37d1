// GET/POST /login/totp (the two-factor step) and GET/POST /login/enrol (enrolment offered after the first factor).
// Both are reachable only by a half-signed-in session (http/gate.ts); completing them promotes it to full.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { clearSessionCookie } from '../../http/cookies.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { render } from '../../http/render.tsx';
import { clientAddress } from '../../http/request.ts';
import { revealLater, revealNow, spendOnce } from '../auth/reveal.tsx';
import { holdSecret } from '../auth/reveals.service.ts';
import { RECOVERY_CODES_REVEAL, recoveryCodesPath, TOTP_KEY_REVEAL } from './second-factor.reveals.ts';
import { qrSvg } from './qr.ts';
import {
  confirmEnrolment,
  pendingEnrolment,
  skipEnrolment,
  startEnrolment,
  verifySecondFactor,
} from './second-factor.service.ts';
import { lockedMessage } from '../auth/login.views.tsx';
import { EnrolOfferPage, EnrolSecretPage } from './second-factor.views.tsx';
import type { Factors } from './factors.ts';
import { promote, sessionIn, startOver, stepPage } from './step-session.tsx';

const codeSchema = z.object({ code: z.string().max(64).default('') });
const enrolSchema = z.object({
  action: z.enum(['start', 'confirm', 'skip']).catch('start'),
  code: z.string().max(64).default(''),
});
const ENROL_TITLE = 'Set up two-factor authentication';

export function secondFactorRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.get('/login/totp', (c) => {
    const session = sessionIn(c, 'totp');
    if (session instanceof Response) return session;
    return stepPage(deps, c, session);
  });

  app.post('/login/totp', async (c) => {
    const session = sessionIn(c, 'totp');
    if (session instanceof Response) return session;
    const form = parseForm(c, codeSchema);
    if (!form.ok) return stepPage(deps, c, session, form.errors.code ?? 'Check the form and try again.', 400);
    const code = form.data.code;
    const result = await verifySecondFactor(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      code,
      address: clientAddress(c),
    });
    if (result.ok) {
      if (!(await promote(deps, c, session))) return startOver(deps, c, session);
      return c.redirect(result.via === 'recovery-code' ? '/profile?notice=recovery-code-used' : '/', 303);
    }
    if (result.reason === 'not-enrolled') return startOver(deps, c, session);
    if (result.reason === 'session-ended') {
      // Too many wrong codes in this session: the password is owed again.
      clearSessionCookie(c, deps.config);
      return c.redirect('/login?notice=code-attempts', 303);
    }
    if (result.reason === 'locked') return stepPage(deps, c, session, lockedMessage(result.retryAfterMs), 429);
    const invalid = (factors: Factors) =>
      factors.totp
        ? 'That code is not valid. Each code works once: wait for the next one, or use a recovery code.'
        : 'That recovery code is not valid, or was used already. Each code works once.';
    return stepPage(deps, c, session, invalid, 401);
  });

  // With a set-up started in this session, the confirming step (the key shown once, on the page after the start's
  // redirect); otherwise the offer.
  app.get('/login/enrol', async (c) => {
    const session = sessionIn(c, 'enrol');
    if (session instanceof Response) return session;
    const pending = await pendingEnrolment(deps, { accountId: session.account.id, sessionIdHash: session.idHash });
    if (!pending) return render(c, ENROL_TITLE, <EnrolOfferPage />);
    return confirmPage(c, await revealNow(c, TOTP_KEY_REVEAL), pending);
  });

  app.post('/login/enrol', async (c) => {
    const session = sessionIn(c, 'enrol');
    if (session instanceof Response) return session;
    const form = parseForm(c, enrolSchema);
    if (!form.ok) return render(c, ENROL_TITLE, <EnrolOfferPage error={Object.values(form.errors)[0]} />, 400);
    const input = form.data;
    const accountId = session.account.id;
    const owner = { accountId, sessionIdHash: session.idHash };

    if (input.action === 'skip') {
      if (!(await skipEnrolment(deps, accountId)) || !(await promote(deps, c, session)))
        return startOver(deps, c, session);
      return c.redirect('/', 303);
    }

    // Starting and confirming mint secrets: a second post of the same form mints nothing and lands on the same page.
    if (!(await spendOnce(c))) return c.redirect('/login/enrol', 303);

    if (input.action === 'start') {
      // The password was checked moments ago by this very sign-in (the session is at most 10 minutes old).
      const started = await startEnrolment(deps, owner);
      if (!started.ok) return startOver(deps, c, session);
      await revealLater(c, TOTP_KEY_REVEAL, started.pending.secret);
      return c.redirect('/login/enrol', 303);
    }

    const confirmed = await confirmEnrolment(deps, { ...owner, code: input.code });
    if (confirmed.ok) {
      // TOTP is on whatever happens to this session; only a session still alive is signed in and shown the codes,
      // held for the new session (its cookie) on the page after the redirect.
      const cookie = await promote(deps, c, session);
      if (!cookie) return startOver(deps, c, session);
      // A passkey added meanwhile (another session) already came with the account's recovery codes.
      if (!confirmed.recoveryCodes) return c.redirect('/', 303);
      await holdSecret(deps, cookie, RECOVERY_CODES_REVEAL, JSON.stringify(confirmed.recoveryCodes));
      return c.redirect(recoveryCodesPath('sign-in'), 303);
    }
    const pending = confirmed.reason === 'invalid-code' ? await pendingEnrolment(deps, owner) : undefined;
    if (!pending) return render(c, ENROL_TITLE, <EnrolOfferPage error="The set-up expired. Start again." />, 409);
    // A wrong code keeps the enrolment; the key is not shown again (it was shown once, on the page after the start).
    return confirmPage(c, undefined, pending, 'That code is not valid. Enter the current code from your app.', 400);
  });

  /** The confirming step; the key only when `held` is this session's pending secret (its one showing). */
  async function confirmPage(
    c: Ctx,
    held: string | undefined,
    pending: { secret: string; uri: string },
    error?: string,
    status: 200 | 400 = 200,
  ) {
    const shown =
      held !== undefined && held === pending.secret ? { ...pending, svg: await qrSvg(pending.uri) } : undefined;
    const restart = { action: '/login/enrol', hidden: { action: 'start' } };
    return render(
      c,
      ENROL_TITLE,
      <EnrolSecretPage
        action="/login/enrol"
        hidden={{ action: 'confirm' }}
        shown={shown}
        error={error}
        restart={restart}
      />,
      status,
    );
  }

  return app;
}

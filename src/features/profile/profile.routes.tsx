// GET /profile and its self-service acts: password change, second-factor enrolment and recovery codes, own sessions.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { clearSessionCookie } from '../../http/cookies.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { clientAddress } from '../../http/request.ts';
import { passwordField } from '../auth/credentials.schema.ts';
import { qrSvg } from '../auth/qr.ts';
import {
  confirmEnrolment,
  pendingEnrolment,
  regenerateRecoveryCodes,
  startEnrolment,
  type PasswordRefusal,
} from '../auth/second-factor.service.ts';
import { EnrolSecretPage, lockedMessage, RecoveryCodesPage } from '../auth/second-factor.views.tsx';
import { endOwnSession } from '../auth/sessions.service.ts';
import { changePassword } from './password.service.ts';
import { PROFILE_NOTICES, renderProfile } from './profile.page.tsx';

const changePasswordSchema = z.object({ current: z.string().max(1024).default(''), password: passwordField });
const passwordOnlySchema = z.object({ password: z.string().max(1024).default('') });
const codeSchema = z.object({ code: z.string().max(64).default('') });
const sessionSchema = z.object({ session: idField('Choose a session to end.') });

const ENROL_TITLE = 'Set up two-factor authentication';

export function profileRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  /** A wrong or throttled re-authentication, shown in the section that asked for it. */
  function refusePassword(c: Ctx, section: string, refusal: PasswordRefusal) {
    const locked = refusal.reason === 'locked';
    const message = refusal.reason === 'locked' ? lockedMessage(refusal.retryAfterMs) : 'Incorrect password.';
    return renderProfile(deps, c, { section, kind: 'error', message }, locked ? 429 : 401);
  }

  /** A form refused before any act (a malformed id, control characters), shown in its section. */
  function refuseForm(c: Ctx, section: string, errors: Record<string, string>) {
    return renderProfile(deps, c, { section, kind: 'error', message: Object.values(errors)[0] ?? 'Check the form and try again.' }, 400);
  }

  app.get('/profile', refuseControlQuery, (c) => {
    const key = c.req.query('notice') ?? '';
    return renderProfile(deps, c, Object.hasOwn(PROFILE_NOTICES, key) ? PROFILE_NOTICES[key] : undefined);
  });

  app.post('/profile/password', async (c) => {
    const session = c.get('session')!;
    const form = parseForm(c, changePasswordSchema);
    if (!form.ok) {
      const message = form.errors.password ?? form.errors.current ?? 'Check the form and try again.';
      return renderProfile(deps, c, { section: 'password', kind: 'error', message }, 400);
    }
    const result = await changePassword(deps, {
      accountId: session.account.id,
      keepSessionIdHash: session.idHash,
      current: form.data.current,
      next: form.data.password,
      address: clientAddress(c),
    });
    if (!result.ok) return refusePassword(c, 'password', result);
    return c.redirect('/profile?notice=password-changed', 303);
  });

  app.post('/profile/totp/start', async (c) => {
    const session = c.get('session')!;
    const form = parseForm(c, passwordOnlySchema);
    if (!form.ok) return refuseForm(c, 'second-factor', form.errors);
    const password = form.data.password;
    const owner = { accountId: session.account.id, sessionIdHash: session.idHash };
    const started = await startEnrolment(deps, { ...owner, password, address: clientAddress(c) });
    if (started.ok) return secretPage(c, started.pending);
    if (started.reason === 'already-enabled') return c.redirect('/profile', 303);
    if (started.reason === 'session-ended') {
      clearSessionCookie(c, deps.config);
      return c.redirect('/login?notice=session-ended', 303);
    }
    return refusePassword(c, 'second-factor', started);
  });

  app.post('/profile/totp/confirm', async (c) => {
    const session = c.get('session')!;
    const form = parseForm(c, codeSchema);
    if (!form.ok) return refuseForm(c, 'second-factor', form.errors);
    const code = form.data.code;
    // The pending secret is this session's own: another session of the account can neither see nor confirm it.
    const owner = { accountId: session.account.id, sessionIdHash: session.idHash };
    const confirmed = await confirmEnrolment(deps, { ...owner, code });
    if (confirmed.ok) {
      return render(c, ENROL_TITLE, <RecoveryCodesPage codes={confirmed.recoveryCodes} continueHref="/profile" intro="Two-factor authentication is on." />);
    }
    const pending = confirmed.reason === 'invalid-code' ? await pendingEnrolment(deps, owner) : undefined;
    if (!pending) {
      return renderProfile(deps, c, { section: 'second-factor', kind: 'error', message: 'The set-up expired. Start again.' }, 409);
    }
    return secretPage(c, pending, 'That code is not valid. Enter the current code from your app.', 400);
  });

  app.post('/profile/recovery-codes', async (c) => {
    const session = c.get('session')!;
    const form = parseForm(c, passwordOnlySchema);
    if (!form.ok) return refuseForm(c, 'second-factor', form.errors);
    const password = form.data.password;
    const result = await regenerateRecoveryCodes(deps, { accountId: session.account.id, sessionIdHash: session.idHash, password, address: clientAddress(c) });
    if (result.ok) {
      return render(
        c,
        'New recovery codes',
        <RecoveryCodesPage codes={result.recoveryCodes} continueHref="/profile" intro="New recovery codes are ready; the old ones no longer work." />,
      );
    }
    if (result.reason === 'not-enrolled') return c.redirect('/profile', 303);
    return refusePassword(c, 'second-factor', result);
  });

  app.post('/profile/sessions/end', async (c) => {
    const session = c.get('session')!;
    const form = parseForm(c, sessionSchema);
    if (!form.ok && form.control) return refuseForm(c, 'sessions', form.errors);
    const publicId = form.ok ? form.data.session : '';
    // A foreign, stale or malformed id matches no row of this account: a no-op (a malformed one is never looked up).
    if (publicId) await endOwnSession(deps, session.account.id, publicId);
    if (publicId === session.publicId) {
      clearSessionCookie(c, deps.config);
      return c.redirect('/login?notice=signed-out', 303);
    }
    return c.redirect('/profile?notice=session-ended', 303);
  });

  async function secretPage(c: Ctx, pending: { secret: string; uri: string }, error?: string, status: 200 | 400 = 200) {
    const svg = await qrSvg(pending.uri);
    return render(c, ENROL_TITLE, <EnrolSecretPage action="/profile/totp/confirm" svg={svg} {...pending} error={error} cancelHref="/profile" />, status);
  }

  return app;
}

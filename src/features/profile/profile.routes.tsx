// GET /profile and its self-service acts: password change, "Confirm it's you", second-factor enrolment and recovery
// codes (each secret shown once on the page after a redirect), own sessions.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { clearSessionCookie } from '../../http/cookies.ts';
import { signedIn, type AppEnv, type Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { clientAddress } from '../../http/request.ts';
import { revealLater, revealNow, spendOnce } from '../auth/reveal.tsx';
import { passwordField } from '../auth/credentials.schema.ts';
import { qrSvg } from '../second-factor/qr.ts';
import { confirmIdentity } from '../second-factor/reauth.service.ts';
import { RECOVERY_CODES_REVEAL, recoveryCodesPath, TOTP_KEY_REVEAL } from '../second-factor/second-factor.reveals.ts';
import { recoveryCodesText, shownRecoveryCodes } from '../second-factor/recovery-codes.ts';
import {
  confirmEnrolment,
  pendingEnrolment,
  regenerateRecoveryCodes,
  startEnrolment,
} from '../second-factor/second-factor.service.ts';
import { EnrolSecretPage, RecoveryCodesPage } from '../second-factor/second-factor.views.tsx';
import { lockedMessage } from '../auth/login.views.tsx';
import { endOwnSession } from '../auth/sessions.service.ts';
import { confirmRefusal } from '../second-factor/confirm-step.tsx';
import { changePassword } from './password.service.ts';
import { PROFILE_NOTICES, renderProfile } from './profile.page.tsx';

const changePasswordSchema = z.object({ current: z.string().max(1024).default(''), password: passwordField });
const confirmSchema = z.object({ secret: z.string().max(1024).default('') });
const codeSchema = z.object({ code: z.string().max(64).default('') });
const sessionSchema = z.object({ session: idField('Choose a session to end.') });
const downloadSchema = z.object({ code: z.array(z.string()) });
/**
 * A form whose only field is its one-time token (read by spendOnce): checked all the same, so a control character in it
 * is refused.
 */
const onceOnlySchema = z.object({});

const ENROL_TITLE = 'Set up two-factor authentication';

export function profileRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  /** A form refused before any act (a malformed id, control characters), shown in its section. */
  function refuseForm(c: Ctx, section: string, errors: Record<string, string>) {
    return renderProfile(
      deps,
      c,
      { section, kind: 'error', message: Object.values(errors)[0] ?? 'Check the form and try again.' },
      400,
    );
  }

  app.get('/profile', refuseControlQuery, (c) => {
    const key = c.req.query('notice') ?? '';
    return renderProfile(deps, c, Object.hasOwn(PROFILE_NOTICES, key) ? PROFILE_NOTICES[key] : undefined);
  });

  app.post('/profile/password', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, changePasswordSchema);
    const refuse = (errors: Record<string, string>, status: 400 | 401 | 429) =>
      renderProfile(
        deps,
        c,
        { section: 'password', kind: 'error', message: '', form: { id: 'password-change', errors } },
        status,
      );
    if (!form.ok) return refuse(form.errors, 400);
    const result = await changePassword(deps, {
      accountId: session.account.id,
      keepSessionIdHash: session.idHash,
      current: form.data.current,
      next: form.data.password,
      address: clientAddress(c),
    });
    if (!result.ok && result.reason === 'locked') return refuse({ current: lockedMessage(result.retryAfterMs) }, 429);
    if (!result.ok) return refuse({ current: 'Incorrect password.' }, 401);
    return c.redirect('/profile?notice=password-changed', 303);
  });

  // "Confirm it's you": the password (or a current authenticator code) opens this session's 10-minute window for
  // minting tokens, changing the second factor and linking an SSO identity. The page has one confirm form for all three
  // (#profile-confirm); a refusal is shown there, a confirmation returns there with its notice.
  app.post('/profile/reauth', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, confirmSchema);
    const refuse = (errors: Record<string, string>, status: 400 | 401 | 429) =>
      renderProfile(
        deps,
        c,
        { section: 'confirm', kind: 'error', message: '', form: { id: 'confirm', errors } },
        status,
      );
    if (!form.ok) return refuse({ secret: form.errors.secret ?? 'Check the form and try again.' }, 400);
    const result = await confirmIdentity(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      secret: form.data.secret,
      address: clientAddress(c),
    });
    if (result.ok) return c.redirect('/profile?notice=confirmed#profile-confirm', 303);
    const refused = confirmRefusal(result, session.account.totp_enabled === 1);
    return refuse(refused.errors, refused.status);
  });

  // POST/redirect/GET: the key is held for this session and shown once on GET /profile/totp.
  app.post('/profile/totp/start', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, onceOnlySchema);
    if (!form.ok) return refuseForm(c, 'second-factor', form.errors);
    if (!(await spendOnce(c))) return c.redirect('/profile/totp', 303);
    const started = await startEnrolment(deps, { accountId: session.account.id, sessionIdHash: session.idHash });
    if (started.ok) {
      await revealLater(c, TOTP_KEY_REVEAL, started.pending.secret);
      return c.redirect('/profile/totp', 303);
    }
    if (started.reason === 'already-enabled') return c.redirect('/profile', 303);
    if (started.reason === 'reauth-required')
      return c.redirect('/profile?notice=confirm-first-second-factor#profile-second-factor', 303);
    clearSessionCookie(c, deps.config);
    return c.redirect('/login?notice=session-ended', 303);
  });

  app.get('/profile/totp', async (c) => {
    const session = signedIn(c);
    const owner = { accountId: session.account.id, sessionIdHash: session.idHash };
    const pending = await pendingEnrolment(deps, owner);
    if (!pending) return c.redirect('/profile?notice=enrolment-expired#profile-second-factor', 303);
    return enrolPage(c, await revealNow(c, TOTP_KEY_REVEAL), pending);
  });

  app.post('/profile/totp/confirm', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, codeSchema);
    if (!form.ok) return refuseForm(c, 'second-factor', form.errors);
    if (!(await spendOnce(c))) return c.redirect(recoveryCodesPath('enrolment'), 303);
    // The pending secret is this session's own: another session of the account can neither see nor confirm it.
    const owner = { accountId: session.account.id, sessionIdHash: session.idHash };
    const confirmed = await confirmEnrolment(deps, { ...owner, code: form.data.code });
    if (confirmed.ok) {
      // An account that already holds a passkey keeps the recovery codes it has.
      if (!confirmed.recoveryCodes) return c.redirect('/profile?notice=totp-on#profile-second-factor', 303);
      await revealLater(c, RECOVERY_CODES_REVEAL, JSON.stringify(confirmed.recoveryCodes));
      return c.redirect(recoveryCodesPath('enrolment'), 303);
    }
    const pending = confirmed.reason === 'invalid-code' ? await pendingEnrolment(deps, owner) : undefined;
    if (!pending) return c.redirect('/profile?notice=enrolment-expired#profile-second-factor', 303);
    // A wrong code keeps the enrolment; the key is not shown again (it was shown once, on the page after the start).
    return enrolPage(c, undefined, pending, 'That code is not valid. Enter the current code from your app.', 400);
  });

  app.post('/profile/recovery-codes', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, onceOnlySchema);
    if (!form.ok) return refuseForm(c, 'second-factor', form.errors);
    if (!(await spendOnce(c))) return c.redirect(recoveryCodesPath('profile'), 303);
    const result = await regenerateRecoveryCodes(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
    });
    if (result.ok) {
      await revealLater(c, RECOVERY_CODES_REVEAL, JSON.stringify(result.recoveryCodes));
      return c.redirect(recoveryCodesPath('profile'), 303);
    }
    if (result.reason === 'not-enrolled') return c.redirect('/profile', 303);
    return c.redirect('/profile?notice=confirm-first-second-factor#profile-second-factor', 303);
  });

  // The one showing of fresh recovery codes; a reload or Back finds them taken.
  app.get('/profile/recovery-codes', refuseControlQuery, async (c) => {
    const from = c.req.query('from');
    const held = await revealNow(c, RECOVERY_CODES_REVEAL);
    const codes = held === undefined ? undefined : (JSON.parse(held) as string[]);
    const page =
      from === 'sign-in' || from === 'enrolment'
        ? { title: ENROL_TITLE, intro: 'Two-factor authentication is on.' }
        : from === 'passkey'
          ? { title: 'Passkey added', intro: 'Your passkey is added, and two-factor authentication is on.' }
          : { title: 'New recovery codes', intro: 'New recovery codes are ready; the old ones no longer work.' };
    const continueHref =
      from === 'sign-in' ? '/' : from === 'passkey' ? '/profile#profile-passkeys' : '/profile#profile-second-factor';
    return render(c, page.title, <RecoveryCodesPage codes={codes} continueHref={continueHref} intro={page.intro} />);
  });

  // "Download as text file" on that page: answers the codes the page posted back (well-formed ones only) as an
  // attachment. The server holds no copy after the one showing, so nothing here can hand the codes out later.
  app.post('/profile/recovery-codes/download', async (c) => {
    const form = parseForm(c, downloadSchema, { multi: ['code'] });
    const codes = form.ok ? shownRecoveryCodes(form.data.code) : undefined;
    if (!codes)
      return refuseForm(c, 'second-factor', {
        code: 'Those are not recovery codes. Generate a new set if you lost yours.',
      });
    const session = signedIn(c);
    c.header('Content-Disposition', 'attachment; filename="svc-recovery-codes.txt"');
    return c.body(recoveryCodesText(codes, session.account.username, deps.clock.now()), 200, {
      'Content-Type': 'text/plain; charset=utf-8',
    });
  });

  app.post('/profile/sessions/end', async (c) => {
    const session = signedIn(c);
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

  /** The confirming step; the key only when `held` is this session's pending secret (its one showing). */
  async function enrolPage(
    c: Ctx,
    held: string | undefined,
    pending: { secret: string; uri: string },
    error?: string,
    status: 200 | 400 = 200,
  ) {
    const shown =
      held !== undefined && held === pending.secret ? { ...pending, svg: await qrSvg(pending.uri) } : undefined;
    const restart = { href: '/profile#profile-second-factor' };
    return render(
      c,
      ENROL_TITLE,
      <EnrolSecretPage
        action="/profile/totp/confirm"
        shown={shown}
        error={error}
        restart={restart}
        cancelHref="/profile"
      />,
      status,
    );
  }

  return app;
}

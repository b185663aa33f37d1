// Renders /profile: every section listed in sections.ts, with a notice (a result, an error, a secret shown once) in
// one of them. A section may render nothing (the "Confirm it's you" step once this session has confirmed).
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { render } from '../../http/render.tsx';
import { Notice } from '../../http/views/components.tsx';
import type { ProfileFeedback } from '../../http/views/profile.tsx';
import { CONFIRM_FIRST } from '../second-factor/confirm-step.tsx';
import { profileSections } from './sections.ts';

/** Fixed notices selected by ?notice= after a redirect, so no text is ever reflected from the URL. */
export const PROFILE_NOTICES: Record<string, ProfileFeedback> = {
  'password-changed': {
    section: 'password',
    kind: 'success',
    message: 'Your password is changed. Your other sessions are signed out.',
  },
  'token-revoked': { section: 'tokens', kind: 'success', message: 'The token no longer works.' },
  'session-ended': { section: 'sessions', kind: 'success', message: 'That session is signed out.' },
  confirmed: {
    section: 'confirm',
    kind: 'success',
    message: (
      <>
        Confirmed. For the next 10 minutes this session can change your{' '}
        <a href="#profile-second-factor">second factor</a> and <a href="#profile-passkeys">passkeys</a>,{' '}
        <a href="#profile-sso">link a sign-in provider</a> and <a href="#profile-tokens">create API tokens</a> without
        confirming again.
      </>
    ),
  },
  'confirm-first-tokens': { section: 'tokens', kind: 'error', message: CONFIRM_FIRST },
  'confirm-first-second-factor': { section: 'second-factor', kind: 'error', message: CONFIRM_FIRST },
  'confirm-first-sso': { section: 'sso', kind: 'error', message: CONFIRM_FIRST },
  'confirm-first-passkeys': { section: 'passkeys', kind: 'error', message: CONFIRM_FIRST },
  'passkey-added': {
    section: 'passkeys',
    kind: 'success',
    message: 'Your passkey is added. Use it to sign in from the sign-in page, or as your second factor.',
  },
  'passkey-renamed': { section: 'passkeys', kind: 'success', message: 'The passkey is renamed.' },
  'passkey-removed': {
    section: 'passkeys',
    kind: 'success',
    message: 'The passkey is removed: it no longer signs in.',
  },
  'passkey-removed-last': {
    section: 'passkeys',
    kind: 'success',
    message:
      'The passkey is removed. Your account has no second factor now: signing in asks for your password only, and your recovery codes no longer work.',
  },
  'enrolment-expired': {
    section: 'second-factor',
    kind: 'error',
    message: 'The set-up expired or was already finished. Start again if two-factor authentication is still off.',
  },
  'totp-on': {
    section: 'second-factor',
    kind: 'success',
    message: 'Two-factor authentication with an authenticator app is on. Your recovery codes are unchanged.',
  },
  'recovery-code-used': {
    section: 'second-factor',
    kind: 'info',
    message: 'You signed in with a recovery code, which no longer works. Generate new codes if few are left.',
  },
};

/** The whole profile page, optionally with feedback for one section (app.ts hands it to other features' routes too). */
export async function renderProfile(
  deps: Deps,
  c: Ctx,
  feedback?: ProfileFeedback,
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  const parts: Child[] = [];
  for (const section of profileSections) {
    const own = feedback?.section === section.key ? feedback : undefined;
    const body = await section.render(deps, c, own);
    // A section with nothing to show (the confirm step once confirmed) leaves no empty box, its notice aside.
    if ((body === null || body === undefined) && (!own || own.form)) continue;
    parts.push(
      <div class="profile-section" id={`profile-${section.key}`}>
        {own && !own.form ? <Notice kind={own.kind}>{own.message}</Notice> : null}
        {body}
      </div>,
    );
  }
  return render(c, 'Profile', parts, status);
}

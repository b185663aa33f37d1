// Renders /profile: every registered section, with a notice (a result, an error, a secret shown once) in one of them.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { render } from '../../http/render.tsx';
import { Notice } from '../../http/views/components.tsx';
import { profileSections } from './sections.ts';

/** A notice shown at the top of one section. */
export interface ProfileFeedback {
  /** The key of the section it belongs to. */
  section: string;
  kind: 'info' | 'error' | 'success';
  message: Child;
}

/** Fixed notices selected by ?notice= after a redirect, so no text is ever reflected from the URL. */
export const PROFILE_NOTICES: Record<string, ProfileFeedback> = {
  'password-changed': { section: 'password', kind: 'success', message: 'Your password is changed. Your other sessions are signed out.' },
  'token-revoked': { section: 'tokens', kind: 'success', message: 'The token no longer works.' },
  'session-ended': { section: 'sessions', kind: 'success', message: 'That session is signed out.' },
  'recovery-code-used': {
    section: 'second-factor',
    kind: 'info',
    message: 'You signed in with a recovery code, which no longer works. Generate new codes if few are left.',
  },
};

/** The whole profile page, optionally with feedback for one section. */
export async function renderProfile(deps: Deps, c: Ctx, feedback?: ProfileFeedback, status: ContentfulStatusCode = 200): Promise<Response> {
  const parts: Child[] = [];
  for (const section of profileSections) {
    parts.push(
      <div class="profile-section" id={`profile-${section.key}`}>
        {feedback?.section === section.key ? <Notice kind={feedback.kind}>{feedback.message}</Notice> : null}
        {await section.render(deps, c)}
      </div>,
    );
  }
  return render(c, 'Profile', <>{parts}</>, status);
}

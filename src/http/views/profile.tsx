// The interface of a profile section and of the page that gathers them. The profile feature lists the sections in its
// sections.ts, the one place that names them, and renders the page; a feature whose routes answer a refused form with
// the whole page receives that renderer from app.ts rather than importing the profile feature.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../env.ts';

/** A notice shown at the top of one section, or a refused form's field errors shown by the section itself. */
export interface ProfileFeedback {
  /** The key of the section it belongs to. */
  section: string;
  kind: 'info' | 'error' | 'success';
  message: Child;
  /** The id of the refused form and its errors by field name (parseForm's map); the notice is then left out. */
  form?: { id: string; errors: Record<string, string>; values?: Record<string, string> };
}

/**
 * One section of /profile: its key (the anchor id and where feedback for it is shown) and what it renders, given the
 * feedback addressed to it (a section may show a refused form's field errors itself).
 */
export interface ProfileSection {
  key: string;
  /** Null or undefined when it has nothing to show (the page then leaves it out, unless it has a notice). */
  render(deps: Deps, c: Ctx, feedback?: ProfileFeedback): Promise<Child>;
}

/** Renders the whole profile page, optionally with feedback for one section. */
export type RenderProfile = (
  deps: Deps,
  c: Ctx,
  feedback?: ProfileFeedback,
  status?: ContentfulStatusCode,
) => Promise<Response>;

/** The anchor of the page's one "Confirm it's you" section (the page wraps each section in `profile-<key>`). */
export const CONFIRM_ANCHOR = '#profile-confirm';

/** What a section shows in place of its act until the session has confirmed: `act` completes "… above to". */
export function ConfirmFirstHint(props: { act: string }) {
  return (
    <p class="confirm-hint">
      <a href={CONFIRM_ANCHOR}>Confirm it’s you</a> above to {props.act}.
    </p>
  );
}

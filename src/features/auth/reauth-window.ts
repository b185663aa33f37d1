// The re-authentication window (see reauth.service.ts): whether a session confirmed itself recently. Kept apart so
// the acts that require it (tokens, second factor, admin invitations, reset links, SSO links) import it without
// importing how a confirmation is checked.
import type { Deps } from '../../deps.ts';
import { findTokenOf } from '../tokens/tokens.repo.ts';
import { findReauthState } from './reauth.repo.ts';

/** How long a confirmation lasts. */
export const REAUTH_WINDOW_MS = 10 * 60_000;

/** What a session is told when an act needs a confirmation it no longer has (every door words it so). */
export const CONFIRM_FIRST = 'Confirm it’s you first: your last confirmation is more than 10 minutes old.';

/** Whether a session row (as findReauthState reads it) is within its confirmation window now. */
function withinWindow(deps: Deps, row: { stage: string; reauthed_at: number | null }): boolean {
  if (row.stage === 'enrol') return true;
  return row.reauthed_at !== null && deps.clock.now() - row.reauthed_at < REAUTH_WINDOW_MS;
}

/**
 * Whether the session confirmed itself within the last 10 minutes. A session still at the enrolment offer (stage
 * `enrol`) counts as confirmed: it passed its first factor at most 10 minutes ago, which is how long it lives.
 */
export async function recentlyConfirmed(deps: Deps, sessionIdHash: string): Promise<boolean> {
  const row = await findReauthState(deps.db, sessionIdHash);
  return row !== undefined && withinWindow(deps, row);
}

/**
 * Who does an act that hands out lasting access, and with what credential: the host command line (`actorId` null), a
 * signed-in session (`sessionIdHash`, absent when the door has none), or a personal API token (`via: 'token'`).
 */
export type Actor =
  | { actorId: string | null; via?: 'session'; sessionIdHash?: string }
  | { actorId: string; via: 'token'; tokenId: string };

/**
 * Whether `actor` may do an act that hands out lasting access: the host command line (`actorId` null; shell access is
 * the trust boundary) always; a session only when it is the actor's own and confirmed itself within the window; a
 * personal API token when it is the actor's own, unexpired and not read-only, of an active account (it was minted
 * behind that very confirmation on the Profile page and already carries every power of its account).
 */
export async function actorRecentlyConfirmed(deps: Deps, actor: Actor): Promise<boolean> {
  if (actor.actorId === null) return true;
  if (actor.via === 'token') {
    const token = await findTokenOf(deps.db, actor.actorId, actor.tokenId);
    if (!token || token.read_only !== 0 || token.suspended_at !== null) return false;
    return token.expires_at === null || deps.clock.now() < token.expires_at;
  }
  if (actor.sessionIdHash === undefined) return false;
  const row = await findReauthState(deps.db, actor.sessionIdHash);
  return row !== undefined && row.account_id === actor.actorId && withinWindow(deps, row);
}

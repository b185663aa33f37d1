// The re-authentication window (see reauth.service.ts): whether a session confirmed itself recently. Kept apart so
// the acts that require it (tokens, second factor, admin invitations, reset links, SSO links) import it without
// importing how a confirmation is checked.
import type { Deps } from '../../deps.ts';
import { findReauthState } from './reauth.repo.ts';

/** How long a confirmation lasts. */
export const REAUTH_WINDOW_MS = 10 * 60_000;

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
 * Whether `actor` may do an act that hands out lasting access: the host command line (`actorId` null; shell access is
 * the trust boundary) always; a signed-in actor only from a session of its own that confirmed itself within the window.
 */
export async function actorRecentlyConfirmed(deps: Deps, actor: { actorId: string | null; sessionIdHash?: string }): Promise<boolean> {
  if (actor.actorId === null) return true;
  if (actor.sessionIdHash === undefined) return false;
  const row = await findReauthState(deps.db, actor.sessionIdHash);
  return row !== undefined && row.account_id === actor.actorId && withinWindow(deps, row);
}

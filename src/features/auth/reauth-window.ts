// The re-authentication window: whether a session confirmed itself recently (how a confirmation is checked, by password
// or authenticator code, is second-factor/reauth.service.ts). Kept apart so the acts that require it (tokens, second
// factor, admin invitations, reset links, SSO links) import it without importing how a confirmation is checked.
import type { Deps } from '../../deps.ts';
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

/** Whether `sessionIdHash` is a session of account `accountId` that confirmed itself within the window. */
export async function sessionOfAccountConfirmed(
  deps: Deps,
  accountId: string,
  sessionIdHash: string,
): Promise<boolean> {
  const row = await findReauthState(deps.db, sessionIdHash);
  return row !== undefined && row.account_id === accountId && withinWindow(deps, row);
}

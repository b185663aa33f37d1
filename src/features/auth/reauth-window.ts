// The re-authentication window (see reauth.service.ts): whether a session confirmed itself recently. Kept apart so
// the acts that require it (tokens, second factor) import it without importing how a confirmation is checked.
import type { Deps } from '../../deps.ts';
import { findReauthState } from './reauth.repo.ts';

/** How long a confirmation lasts. */
export const REAUTH_WINDOW_MS = 10 * 60_000;

/**
 * Whether the session confirmed itself within the last 10 minutes. A session still at the enrolment offer (stage
 * `enrol`) counts as confirmed: it passed its first factor at most 10 minutes ago, which is how long it lives.
 */
export async function recentlyConfirmed(deps: Deps, sessionIdHash: string): Promise<boolean> {
  const row = await findReauthState(deps.db, sessionIdHash);
  if (!row) return false;
  if (row.stage === 'enrol') return true;
  return row.reauthed_at !== null && deps.clock.now() - row.reauthed_at < REAUTH_WINDOW_MS;
}

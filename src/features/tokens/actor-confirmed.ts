// Whether an actor may do an act that hands out lasting access: the re-authentication window of auth for a session,
// and for a personal API token the token's own state, which is why this rule sits with the tokens.
import type { Deps } from '../../deps.ts';
import { sessionOfAccountConfirmed, type Actor } from '../auth/reauth-window.ts';
import { findTokenOf } from './tokens.repo.ts';

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
    if (token?.read_only !== 0 || token.suspended_at !== null) return false;
    return token.expires_at === null || deps.clock.now() < token.expires_at;
  }
  if (actor.sessionIdHash === undefined) return false;
  return sessionOfAccountConfirmed(deps, actor.actorId, actor.sessionIdHash);
}

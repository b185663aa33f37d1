// Who may do an admin act, decided by the act itself and not only by the access gate in front of its routes: a route a
// later change leaves out of the gate's table is still closed, and every door (page, API, command line) gets the same
// answer. The actor is the one of Actor (reauth-window.ts): the host command line (`actorId` null), a signed-in
// session, or a personal API token.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { findAccountById } from './accounts.repo.ts';

/**
 * Whoever does an admin act: an account's id, or null for the host command line (shell access is the trust boundary).
 */
export interface AdminActor {
  actorId: string | null;
}

/** The host command line as an actor: an administrator by the shell access it took to run it. */
export const CLI_ACTOR: AdminActor = { actorId: null };

/**
 * Whether `actor` is an administrator now: the host command line always; an account only while its role (read from
 * its row, never from a credential) is admin and it is not suspended. `db` is a transaction when the act runs in one.
 */
export async function actorIsAdmin(
  deps: Deps,
  actor: AdminActor,
  db: Kysely<DB> | Transaction<DB> = deps.db,
): Promise<boolean> {
  if (actor.actorId === null) return true;
  const account = await findAccountById(db, actor.actorId);
  return account !== undefined && account.role === 'admin' && account.suspended_at === null;
}

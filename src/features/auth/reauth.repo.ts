// Plain data access for re-authentication within a session: the session's reauthed_at column.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** Records that the session re-typed its password or a second-factor code at `now`. */
export async function setReauthedAt(db: Q, sessionIdHash: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ reauthed_at: now }).where('id_hash', '=', sessionIdHash).execute();
}

/** The session's account, stage and last re-authentication, when the session exists. */
export function findReauthState(db: Q, sessionIdHash: string) {
  return db
    .selectFrom('sessions')
    .select(['account_id', 'stage', 'reauthed_at'])
    .where('id_hash', '=', sessionIdHash)
    .executeTakeFirst();
}

// Queries for secrets held until their one showing, and for spent one-time form tokens.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Holds one sealed secret per session and kind; a newer one replaces the older. */
export async function putReveal(
  db: Db,
  row: { sessionIdHash: string; kind: string; sealed: string; now: number },
): Promise<void> {
  await db
    .insertInto('session_reveals')
    .values({ session_id_hash: row.sessionIdHash, kind: row.kind, sealed: row.sealed, created_at: row.now })
    .onConflict((oc) =>
      oc.columns(['session_id_hash', 'kind']).doUpdateSet({ sealed: row.sealed, created_at: row.now }),
    )
    .execute();
}

/** Deletes and returns the sealed secret in one statement, so two requests cannot both read it. */
export async function takeReveal(
  db: Db,
  sessionIdHash: string,
  kind: string,
): Promise<{ sealed: string; created_at: number } | undefined> {
  return db
    .deleteFrom('session_reveals')
    .where('session_id_hash', '=', sessionIdHash)
    .where('kind', '=', kind)
    .returning(['sealed', 'created_at'])
    .executeTakeFirst();
}

/** Records a form token as spent; false when this session had already spent it. */
export async function spendFormToken(db: Db, sessionIdHash: string, tokenHash: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('spent_form_tokens')
    .values({ session_id_hash: sessionIdHash, token_hash: tokenHash, spent_at: now })
    .onConflict((oc) => oc.columns(['session_id_hash', 'token_hash']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

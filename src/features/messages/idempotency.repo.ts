// Plain data access for Idempotency-Key rows (api_idempotency): one per (account, key), holding the first answer.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ApiIdempotencyTable, DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** One key's row: its request's fingerprint and the first answer. */
export type IdempotencyRow = ApiIdempotencyTable;

/**
 * Claims (account, key) for a new request: inserts the row, or takes over one created at or before `expiredThrough`.
 * False when a live row holds the key. On PostgreSQL a concurrent claim of the same key waits here until the first
 * transaction ends (the primary key's lock), then sees its row: that is what makes two racing requests store one
 * message.
 */
export async function claimKey(db: Q, row: IdempotencyRow, expiredThrough: number): Promise<boolean> {
  const result = await db
    .insertInto('api_idempotency')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'key'])
        .doUpdateSet({
          request_hash: sql<string>`excluded.request_hash`,
          status: sql<number>`excluded.status`,
          response: sql<string>`excluded.response`,
          created_at: sql<number>`excluded.created_at`,
        })
        .where('api_idempotency.created_at', '<=', expiredThrough),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The row of (account, key), if any. */
export function findKey(db: Q, accountId: string, key: string): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('api_idempotency')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Records the answer of the request that claimed (account, key). */
export async function saveAnswer(
  db: Q,
  p: { accountId: string; key: string; status: number; response: string },
): Promise<void> {
  await db
    .updateTable('api_idempotency')
    .set({ status: p.status, response: p.response })
    .where('account_id', '=', p.accountId)
    .where('key', '=', p.key)
    .execute();
}

/** Deletes rows created at or before `through`; returns how many. */
export async function deleteKeysThrough(db: Q, through: number): Promise<number> {
  const result = await db.deleteFrom('api_idempotency').where('created_at', '<=', through).executeTakeFirst();
  return Number(result.numDeletedRows);
}

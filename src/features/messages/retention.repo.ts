// Plain data access for retention: the stored dial and the prune queries.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

const RETENTION_KEY = 'messages.retention_days';

/** The stored retention in days, or undefined when never set. */
export async function findRetentionDays(db: Q): Promise<number | undefined> {
  const row = await db.selectFrom('meta').select('value').where('key', '=', RETENTION_KEY).executeTakeFirst();
  const days = row ? Number(row.value) : NaN;
  return Number.isInteger(days) && days > 0 ? days : undefined;
}

/** Stores the retention in days. */
export async function saveRetentionDays(db: Q, days: number): Promise<void> {
  await db
    .insertInto('meta')
    .values({ key: RETENTION_KEY, value: String(days) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(days) }))
    .execute();
}

/** Up to `limit` ids of messages created before `cutoff` that have no pending delivery. */
export async function findPrunableMessageIds(db: Q, cutoff: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('messages as m')
    .select('m.id')
    .where('m.created_at', '<', cutoff)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('deliveries as d')
            .select('d.id')
            .whereRef('d.message_id', '=', 'm.id')
            .where('d.state', '=', 'pending'),
        ),
      ),
    )
    .orderBy('m.created_at', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Deletes the messages (their deliveries, attempts and read marks go with them by cascade), skipping any that gained a
 * pending delivery.
 */
export async function deleteMessages(db: Q, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .deleteFrom('messages')
    .where('id', 'in', ids)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('deliveries as d')
            .select('d.id')
            .whereRef('d.message_id', '=', 'messages.id')
            .where('d.state', '=', 'pending'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

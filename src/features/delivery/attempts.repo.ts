// Plain queries over delivery_attempts: one row per POST attempt of a delivery; no business rules.
import type { Kysely, Transaction } from 'kysely';
import type { DB, DeliveryAttemptsTable } from '../../db/schema.ts';

/** One attempt as stored: when it started, how long it took, its verdict, and what the receiver answered. */
export type AttemptRow = DeliveryAttemptsTable;

/** Records one attempt (the primary key refuses a second row for the same delivery and attempt number). */
export async function insertAttempt(db: Kysely<DB> | Transaction<DB>, row: AttemptRow): Promise<void> {
  await db.insertInto('delivery_attempts').values(row).execute();
}

/** The attempts of the given deliveries, oldest first per delivery; a delivery without attempts has no entry. */
export async function attemptsOf(
  db: Kysely<DB> | Transaction<DB>,
  deliveryIds: string[],
): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt_no')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(row);
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
}

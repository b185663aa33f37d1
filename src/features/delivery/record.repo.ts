// The record stage's plain queries: close a delivery after an attempt, update its channel's counters. The values
// (next state, retry time, streak) are decided by the service; the attempt row itself is attempts.repo.ts's.
import type { Kysely, Transaction } from 'kysely';
import type { DB, DeliveriesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** A delivery's row after an attempt: its new state and counters; next_attempt_at only when it changes. */
export type DeliveryAfterAttempt = Pick<DeliveriesTable, 'state' | 'attempts' | 'delivered_at' | 'last_error' | 'updated_at'> & { next_attempt_at?: number };

/**
 * Writes `after` on the delivery and gives its lease back, only if `owner` still holds the lease on the pending row
 * and no other attempt was recorded since the claim (`attempts` unchanged). Returns whether it did.
 */
export async function closeDelivery(db: Q, id: string, owner: string, attemptsBefore: number, after: DeliveryAfterAttempt): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set({ ...after, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'pending')
    .where('attempts', '=', attemptsBefore)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A channel's counters after a success: the failure streak ends. */
export async function markChannelSuccess(db: Q, channelId: string, at: number): Promise<void> {
  await db.updateTable('channels').set({ consecutive_failures: 0, last_success_at: at }).where('id', '=', channelId).execute();
}

/** A channel's counters after a failure: the streak grows by one (in the database, so concurrent workers add up). */
export async function markChannelFailure(db: Q, channelId: string, error: string, at: number): Promise<void> {
  await db
    .updateTable('channels')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1), last_error: error, last_error_at: at }))
    .where('id', '=', channelId)
    .execute();
}

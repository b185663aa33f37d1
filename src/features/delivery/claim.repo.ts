// The claim stage's plain queries: which deliveries are due, leasing them, what their attempts need, giving leases
// back, and cancelling what can no longer be sent. No business rules (the per-channel cap is the service's).
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** What one attempt needs: the stored body bytes and the channel's URL and secret, read in the claim's transaction. */
export interface AttemptJob {
  id: string;
  channel_id: string;
  /** Attempts made so far (this one not included). */
  attempts: number;
  /** When the delivery was queued (emit or re-send): the start of the first-attempt delay /metrics reports. */
  created_at: number;
  body: string;
  url: string;
  secret: string | null;
}

/** Pending, due and not leased (or its lease ran out: its worker died). */
function dueAndFree(now: number) {
  return (eb: ExpressionBuilder<DB, 'deliveries'>) =>
    eb.and([
      // A literal state, so both planners can use the partial index deliveries_due (state = 'pending').
      eb('deliveries.state', '=', sql.lit('pending')),
      eb('deliveries.next_attempt_at', '<=', now),
      eb.or([eb('deliveries.lease_until', 'is', null), eb('deliveries.lease_until', '<=', now)]),
    ]);
}

/**
 * The oldest due deliveries of enabled channels outside `exclude`, oldest first, at most `limit`, with what their
 * attempts need. On PostgreSQL the delivery rows are locked for the caller's transaction and rows another transaction
 * holds are skipped, so concurrent claims take different rows; SQLite's claim runs in an immediate transaction, which
 * no other writer can enter.
 */
export async function dueCandidates(db: Q, dialect: Dialect, p: { now: number; exclude: string[]; limit: number }): Promise<AttemptJob[]> {
  const rows = await db
    .selectFrom('deliveries')
    .innerJoin('channels', 'channels.id', 'deliveries.channel_id')
    .innerJoin('messages', 'messages.id', 'deliveries.message_id')
    .select(['deliveries.id', 'deliveries.channel_id', 'deliveries.attempts', 'deliveries.created_at', 'messages.body', 'channels.url', 'channels.secret'])
    .where(dueAndFree(p.now))
    .where('channels.enabled', '=', 1)
    .$if(p.exclude.length > 0, (q) => q.where('deliveries.channel_id', 'not in', p.exclude))
    // No tie-breaker: the due index is read in order and the scan stops after the limit.
    .orderBy('deliveries.next_attempt_at')
    .limit(p.limit)
    // Locks only the deliveries rows: the channels and messages stay free for their admin and for recording.
    .$if(dialect === 'postgres', (q) => q.forUpdate('deliveries').skipLocked())
    .execute();
  // The inner join leaves only rows with a channel.
  return rows as AttemptJob[];
}

/** Leases the given deliveries to `owner` until `leaseUntil`, those still due and free; returns the ids it leased. */
export async function leaseDeliveries(db: Q, ids: string[], owner: string, now: number, leaseUntil: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('deliveries')
    .set({ lease_owner: owner, lease_until: leaseUntil })
    .where('deliveries.id', 'in', ids)
    .where(dueAndFree(now))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Gives leases back without an attempt (the worker stopped before a verdict, or never started it): due again at once. */
export async function releaseLeases(db: Q, ids: string[], owner: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('deliveries')
    .set({ lease_owner: null, lease_until: null })
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * Pending deliveries whose channel was deleted or disabled are never sent: they become `cancelled` with
 * the reason. Rows leased to a worker are left to finish their attempt first. Returns how many it cancelled.
 */
export async function cancelUndeliverable(db: Q, now: number): Promise<number> {
  const free = (eb: ExpressionBuilder<DB, 'deliveries'>) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]);
  const cancel = { state: 'cancelled', updated_at: now, lease_owner: null, lease_until: null } as const;
  const deleted = await db
    .updateTable('deliveries')
    .set({ ...cancel, last_error: 'channel deleted' })
    .where('channel_id', 'is', null)
    .where('state', '=', 'pending')
    .where(free)
    .executeTakeFirst();
  const disabled = await db
    .updateTable('deliveries')
    .set({ ...cancel, last_error: 'channel disabled' })
    .where('channel_id', 'in', (eb) => eb.selectFrom('channels').select('id').where('enabled', '=', 0))
    .where('state', '=', 'pending')
    .where(free)
    .executeTakeFirst();
  return Number(deleted.numUpdatedRows) + Number(disabled.numUpdatedRows);
}

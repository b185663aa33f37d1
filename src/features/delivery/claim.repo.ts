// The claim stage's plain queries: which deliveries are due, leasing them, what their attempts need, giving leases
// back, and cancelling what can no longer be sent. No business rules (the per-channel cap is the service's).
import { sql, type ExpressionBuilder, type Kysely, type QueryCreator, type Transaction } from 'kysely';
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
 * Which deliveries one claim leases: the oldest due of enabled channels outside `exclude`, at most `limit`, to `owner`.
 */
export interface LeaseRequest {
  now: number;
  exclude: string[];
  limit: number;
  owner: string;
  leaseUntil: number;
}

const JOB_COLUMNS = [
  'deliveries.id',
  'deliveries.channel_id',
  'deliveries.attempts',
  'deliveries.created_at',
  'messages.body',
  'channels.url',
  'channels.secret',
] as const;

/** The due deliveries a claim may take, oldest first, at most `limit`. */
function dueOf(db: QueryCreator<DB>, p: LeaseRequest) {
  return (
    db
      .selectFrom('deliveries')
      .innerJoin('channels', 'channels.id', 'deliveries.channel_id')
      .where(dueAndFree(p.now))
      .where('channels.enabled', '=', 1)
      .$if(p.exclude.length > 0, (q) => q.where('deliveries.channel_id', 'not in', p.exclude))
      // No tie-breaker: the due index is read in order and the scan stops after the limit.
      .orderBy('deliveries.next_attempt_at')
      .limit(p.limit)
  );
}

/**
 * Leases the oldest due deliveries (see LeaseRequest) and returns what their attempts need, oldest first; concurrent
 * claims take different rows. PostgreSQL: ONE statement (the rows picked FOR UPDATE SKIP LOCKED, so rows another claim
 * holds are skipped, then leased; one round trip instead of four, which is what a claim costs under load). SQLite: one
 * immediate transaction, which no other writer can enter.
 */
export async function leaseDue(db: Kysely<DB>, dialect: Dialect, p: LeaseRequest): Promise<AttemptJob[]> {
  const lease = { lease_owner: p.owner, lease_until: p.leaseUntil };
  if (dialect === 'postgres') {
    const rows = await db
      // Locks only the deliveries rows: the channels and messages stay free for their admin and for recording.
      .with('picked', (q) => dueOf(q, p).select('deliveries.id').forUpdate('deliveries').skipLocked())
      .with('leased', (q) =>
        q
          .updateTable('deliveries')
          .set(lease)
          .from('picked')
          .whereRef('deliveries.id', '=', 'picked.id')
          .returning([
            'deliveries.id',
            'deliveries.channel_id',
            'deliveries.message_id',
            'deliveries.attempts',
            'deliveries.created_at',
            'deliveries.next_attempt_at',
          ]),
      )
      // Same snapshot as `picked`, whose lock re-checked each row (a channel or message deleted since changes the
      // delivery row too: SET NULL, CASCADE), so every leased row has its channel and message here.
      .selectFrom('leased as deliveries')
      .innerJoin('channels', 'channels.id', 'deliveries.channel_id')
      .innerJoin('messages', 'messages.id', 'deliveries.message_id')
      .select(JOB_COLUMNS)
      .orderBy('deliveries.next_attempt_at')
      .execute();
    return rows as AttemptJob[];
  }
  return db.transaction().execute(async (trx) => {
    const rows = await dueOf(trx, p)
      .innerJoin('messages', 'messages.id', 'deliveries.message_id')
      .select(JOB_COLUMNS)
      .execute();
    if (rows.length > 0)
      await trx
        .updateTable('deliveries')
        .set(lease)
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
    return rows as AttemptJob[];
  });
}

/**
 * Gives leases back without an attempt (the worker stopped before a verdict, or never started it): due again at once.
 */
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
  const free = (eb: ExpressionBuilder<DB, 'deliveries'>) =>
    eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]);
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

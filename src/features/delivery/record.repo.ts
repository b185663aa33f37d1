// The record stage's plain queries: close a delivery after an attempt, write its attempt row, update its channel's
// counters. The values (next state, retry time, streak change) are decided by the service.
import type { ExpressionBuilder, Kysely, Transaction, UpdateObject } from 'kysely';
import type { DB, DeliveriesTable } from '../../db/schema.ts';
import { insertAttempt, type AttemptRow } from './attempts.repo.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** A delivery's row after an attempt: its new state and counters; next_attempt_at only when it changes. */
export type DeliveryAfterAttempt = Pick<
  DeliveriesTable,
  'state' | 'attempts' | 'delivered_at' | 'last_error' | 'updated_at'
> & { next_attempt_at?: number };

/**
 * One recorded attempt: the delivery held by `owner` with `attemptsBefore` attempts, its row after, the attempt, the
 * channel's change.
 */
export interface AttemptRecord {
  id: string;
  owner: string;
  attemptsBefore: number;
  after: DeliveryAfterAttempt;
  attempt: AttemptRow;
  channelId: string;
  channel: UpdateObject<DB, 'channels'>;
}

/**
 * SQLite, inside the caller's (immediate) transaction: closes the delivery, writes the attempt row and updates the
 * channel, only if `owner` still holds the lease on the pending row and no other attempt was recorded since the claim
 * (`attempts` unchanged). Returns whether it recorded.
 */
export async function recordIn(trx: Q, r: AttemptRecord): Promise<boolean> {
  const closed = await trx.updateTable('deliveries').set(closing(r)).where(heldBy(r)).executeTakeFirst();
  if (Number(closed.numUpdatedRows) !== 1) return false;
  await insertAttempt(trx, r.attempt);
  await trx.updateTable('channels').set(r.channel).where('id', '=', r.channelId).execute();
  return true;
}

/**
 * PostgreSQL: the same three writes as recordIn in ONE statement (data-modifying CTEs share one snapshot and commit
 * together, so it is atomic without BEGIN/COMMIT): one round trip instead of five, which is what keeps a recorded
 * attempt cheap enough (each round trip costs a socket write here and a parse and plan in the server).
 */
export async function recordInOneStatement(db: Q, r: AttemptRecord): Promise<boolean> {
  const a = r.attempt;
  const row = await db
    .with('closed', (q) => q.updateTable('deliveries').set(closing(r)).where(heldBy(r)).returning('deliveries.id'))
    .with('attempt', (q) =>
      q
        .insertInto('delivery_attempts')
        .columns([
          'delivery_id',
          'attempt_no',
          'started_at',
          'duration_ms',
          'verdict',
          'status_code',
          'error',
          'response_excerpt',
        ])
        .expression((eb) =>
          eb.selectFrom('closed').select((s) => [
            'closed.id',
            // Typed, since a parameter in a select list would otherwise be text.
            s.cast<number>(s.val(a.attempt_no), 'integer').as('attempt_no'),
            s.cast<number>(s.val(a.started_at), 'bigint').as('started_at'),
            s.cast<number>(s.val(a.duration_ms), 'integer').as('duration_ms'),
            s.cast<string>(s.val(a.verdict), 'text').as('verdict'),
            s.cast<number | null>(s.val(a.status_code), 'integer').as('status_code'),
            s.cast<string | null>(s.val(a.error), 'text').as('error'),
            s.cast<string | null>(s.val(a.response_excerpt), 'text').as('response_excerpt'),
          ]),
        ),
    )
    .with('channel', (q) =>
      q
        .updateTable('channels')
        .set(r.channel)
        .where('id', '=', r.channelId)
        .where((eb) => eb.exists(eb.selectFrom('closed').select('closed.id'))),
    )
    .selectFrom('closed')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n) === 1;
}

/** The delivery's row after the attempt, its lease given back. */
function closing(r: AttemptRecord): UpdateObject<DB, 'deliveries'> {
  return { ...r.after, lease_owner: null, lease_until: null };
}

/** The delivery `r.owner` still holds: pending, leased to it, and no attempt recorded since its claim. */
function heldBy(r: AttemptRecord) {
  return (eb: ExpressionBuilder<DB, 'deliveries'>) =>
    eb.and([
      eb('deliveries.id', '=', r.id),
      eb('deliveries.lease_owner', '=', r.owner),
      eb('deliveries.state', '=', 'pending'),
      eb('deliveries.attempts', '=', r.attemptsBefore),
    ]);
}

// Plain queries over the outbox (deliveries, delivery_attempts) and the channel counters; no business rules.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB, DeliveriesTable, DeliveryAttemptsTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** What a claim asks for. */
export interface ClaimParams {
  owner: string;
  now: number;
  leaseUntil: number;
  /** Most deliveries to claim (the worker's free slots). */
  limit: number;
  /** Most deliveries of one channel in one claim, unless `quotas` says fewer for that channel. */
  perChannel: number;
  /** Channels this worker is already saturating: none of theirs are claimed, so they cannot crowd out others. */
  exclude: string[];
  /** Remaining room for channels this worker already has some attempts in flight to. */
  quotas: Map<string, number>;
  /** How many of the oldest due rows are considered per claim. */
  window: number;
}

/** What one attempt needs: the stored body bytes and the channel's URL and secret, read in the claim's transaction. */
export interface AttemptJob {
  id: string;
  channel_id: string;
  attempts: number;
  body: string;
  url: string;
  secret: string | null;
}

/**
 * Leases due deliveries of enabled channels in one UPDATE: the oldest due rows, at most `quota` per channel,
 * at most `limit` in all. A row whose lease has expired (its worker died) is due again.
 * PostgreSQL locks the candidates with FOR UPDATE SKIP LOCKED, so concurrent workers take different rows, and reads
 * the jobs in the same statement; SQLite runs the UPDATE ... RETURNING inside an immediate (write-locked) transaction
 * and reads the jobs before committing.
 */
export async function claimJobs(db: Kysely<DB>, dialect: Dialect, p: ClaimParams): Promise<AttemptJob[]> {
  const exclude = p.exclude.length > 0 ? sql`and d.channel_id not in (${sql.join(p.exclude)})` : sql``;
  const quota =
    p.quotas.size > 0
      ? sql`case r.channel_id ${sql.join(
          [...p.quotas].map(([channel, n]) => sql`when ${channel} then cast(${n} as integer)`),
          sql` `,
        )} else cast(${p.perChannel} as integer) end`
      : sql`cast(${p.perChannel} as integer)`;
  const pg = dialect === 'postgres';
  const lock = pg ? sql`for update of d skip locked` : sql``;
  // PostgreSQL: = any(array(...)) runs the selection once and updates by primary key; a plain IN would be planned
  // as a hash join over a scan of the whole deliveries table.
  const claim = sql`
    update deliveries set lease_owner = ${p.owner}, lease_until = ${p.leaseUntil}, updated_at = ${p.now}
    where id ${pg ? sql`= any(array(` : sql`in (`}
      select r.id from (
        select c.id, c.channel_id, c.next_attempt_at,
               row_number() over (partition by c.channel_id order by c.next_attempt_at) as rn
        from (
          select d.id, d.channel_id, d.next_attempt_at
          from deliveries d join channels ch on ch.id = d.channel_id
          where d.state = 'pending' and d.next_attempt_at <= ${p.now}
            and (d.lease_until is null or d.lease_until <= ${p.now})
            and ch.enabled = 1 ${exclude}
          order by d.next_attempt_at
          limit ${p.window}
          ${lock}
        ) c
      ) r
      where r.rn <= ${quota}
      order by r.next_attempt_at
      limit ${p.limit}
    ${pg ? sql`))` : sql`)`}
    returning id, message_id, channel_id, attempts`;
  if (pg) {
    const jobs = sql<AttemptJob>`
      with claimed as (${claim})
      select c.id, c.channel_id, c.attempts, m.body, ch.url, ch.secret
      from claimed c join messages m on m.id = c.message_id join channels ch on ch.id = c.channel_id`;
    return (await jobs.execute(db)).rows;
  }
  return db.transaction().execute(async (trx) => {
    const claimed = (await claim.execute(trx)).rows as { id: string }[];
    return loadJobs(trx, claimed.map((c) => c.id));
  });
}

/** Loads the jobs of claimed delivery ids. */
export function loadJobs(db: Q, ids: string[]): Promise<AttemptJob[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('deliveries as d')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .innerJoin('channels as c', 'c.id', 'd.channel_id')
    .select(['d.id', 'd.channel_id', 'd.attempts', 'm.body', 'c.url', 'c.secret'])
    .where('d.id', 'in', ids)
    .execute() as Promise<AttemptJob[]>;
}

/** Closes an attempt on the delivery row, only while `owner` still holds its lease; returns whether it did. */
export async function finishDelivery(
  db: Q,
  id: string,
  owner: string,
  set: Pick<DeliveriesTable, 'state' | 'attempts' | 'next_attempt_at' | 'delivered_at' | 'last_error' | 'updated_at'>,
): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set({ ...set, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks deliveries delivered in one statement, only those `owner` still holds; returns the ids it updated. */
export async function markDelivered(db: Q, ids: string[], owner: string, now: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable('deliveries')
    .set((eb) => ({ state: 'delivered', attempts: eb('attempts', '+', 1), delivered_at: now, last_error: null, updated_at: now, lease_owner: null, lease_until: null }))
    .where('id', 'in', ids)
    // Holding the lease implies pending (every other transition clears it). Deliberately no state term here:
    // SQLite would plan an IN-list with one as a scan of every pending row.
    .where('lease_owner', '=', owner)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Records attempts and their verdicts (chunked: SQLite caps bound parameters per statement). */
export async function insertAttempts(db: Q, rows: DeliveryAttemptsTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) await db.insertInto('delivery_attempts').values(rows.slice(i, i + 100)).execute();
}

/** Sets a channel's counters after a batch in which it succeeded and then failed `failures` times. */
export async function resetChannelThenFail(db: Q, channelId: string, failures: number, error: string, now: number): Promise<void> {
  await db
    .updateTable('channels')
    .set({ consecutive_failures: failures, last_success_at: now, last_error: error, last_error_at: now })
    .where('id', '=', channelId)
    .execute();
}

/** A success resets the failure streak; last_success_at is refreshed at most once a second so busy channels' rows stay cool. */
export async function markChannelsSucceeded(db: Q, channelIds: string[], now: number): Promise<void> {
  if (channelIds.length === 0) return;
  await db
    .updateTable('channels')
    .set({ consecutive_failures: 0, last_success_at: now })
    .where('id', 'in', channelIds)
    .where((eb) => eb.or([eb('consecutive_failures', '<>', 0), eb('last_success_at', 'is', null), eb('last_success_at', '<', now - 1000)]))
    .execute();
}

/** Failures extend the streak (by `count`) and replace the last error. */
export async function markChannelFailure(db: Q, channelId: string, error: string, now: number, count = 1): Promise<void> {
  await db
    .updateTable('channels')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', count), last_error: error, last_error_at: now }))
    .where('id', '=', channelId)
    .execute();
}

/** Gives a lease back without an attempt (the worker stopped before a verdict): due again at once. */
export async function releaseLease(db: Q, id: string, owner: string, now: number): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ lease_owner: null, lease_until: null, updated_at: now })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * Pending deliveries whose channel was deleted or disabled are never sent: they become `cancelled` with
 * the reason. Rows leased to a worker are left to finish their attempt first.
 */
export async function cancelUndeliverable(db: Q, now: number): Promise<number> {
  const free = (eb: any) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]);
  const deleted = await db
    .updateTable('deliveries')
    .set({ state: 'cancelled', last_error: 'channel deleted', updated_at: now, lease_owner: null, lease_until: null })
    .where('channel_id', 'is', null)
    .where('state', '=', 'pending')
    .where(free)
    .executeTakeFirst();
  const disabled = await db
    .updateTable('deliveries')
    .set({ state: 'cancelled', last_error: 'channel disabled', updated_at: now, lease_owner: null, lease_until: null })
    .where('channel_id', 'in', (eb) => eb.selectFrom('channels').select('id').where('enabled', '=', 0))
    .where('state', '=', 'pending')
    .where(free)
    .executeTakeFirst();
  return Number(deleted.numUpdatedRows) + Number(disabled.numUpdatedRows);
}

/** A delivery with its channel's URL (null once deleted), enabled flag, and whether a later re-send replaced it. */
export type DeliveryWithChannel = DeliveriesTable & { channel_url: string | null; channel_enabled: number | null; superseded: number };

/** Deliveries of a message, undelivered first (dead, pending, cancelled, then delivered), oldest series first within each. */
export function deliveriesOfMessage(db: Q, messageId: string, limit: number): Promise<DeliveryWithChannel[]> {
  return db
    .selectFrom('deliveries as d')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .selectAll('d')
    .select(['c.url as channel_url', 'c.enabled as channel_enabled'])
    .select((eb) =>
      eb
        .case()
        .when(
          eb.exists(
            eb
              .selectFrom('deliveries as later')
              .select('later.id')
              .whereRef('later.message_id', '=', 'd.message_id')
              .whereRef('later.channel_id', '=', 'd.channel_id')
              .whereRef('later.created_at', '>', 'd.created_at'),
          ),
        )
        .then(1)
        .else(0)
        .end()
        .as('superseded'),
    )
    .where('d.message_id', '=', messageId)
    .orderBy(sql`case d.state when 'dead' then 0 when 'pending' then 1 when 'cancelled' then 2 else 3 end`)
    .orderBy('d.created_at')
    .orderBy('d.id')
    .limit(limit)
    .execute() as Promise<DeliveryWithChannel[]>;
}

/** How many deliveries of a message are in each state (one grouped count over that message's rows only). */
export async function countDeliveriesOfMessage(db: Q, messageId: string): Promise<Record<DeliveriesTable['state'], number>> {
  const rows = await db
    .selectFrom('deliveries')
    .select((eb) => ['state', eb.fn.countAll<number | string>().as('n')])
    .where('message_id', '=', messageId)
    .groupBy('state')
    .execute();
  const counts = { pending: 0, delivered: 0, dead: 0, cancelled: 0 };
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

/** Every attempt of the given deliveries, in order. */
export function attemptsOf(db: Q, deliveryIds: string[]): Promise<DeliveryAttemptsTable[]> {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt_no')
    .execute();
}

/** Dead-lettered and cancelled deliveries that no later series replaced, newest first, with their message headline. */
export function undeliveredLatest(db: Q, limit: number) {
  return db
    .selectFrom('deliveries as d')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .select(['d.id', 'd.message_id', 'd.channel_id', 'd.state', 'd.attempts', 'd.last_error', 'd.updated_at', 'm.headline', 'c.url as channel_url', 'c.enabled as channel_enabled'])
    .where('d.state', 'in', ['dead', 'cancelled'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('deliveries as later')
            .select('later.id')
            .whereRef('later.message_id', '=', 'd.message_id')
            .whereRef('later.channel_id', '=', 'd.channel_id')
            .whereRef('later.created_at', '>', 'd.created_at'),
        ),
      ),
    )
    .orderBy('d.updated_at', 'desc')
    .orderBy('d.id')
    .limit(limit)
    .execute();
}

/** One delivery by id; on PostgreSQL row-locked for the rest of the transaction. */
export function findDeliveryForUpdate(db: Q, dialect: Dialect, id: string): Promise<DeliveriesTable | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('id', '=', id)
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
}

/** Whether a later series (a re-send) of the same message to the same channel exists. */
export async function laterSeriesExists(db: Q, d: Pick<DeliveriesTable, 'message_id' | 'channel_id' | 'created_at'>): Promise<boolean> {
  const row = await db
    .selectFrom('deliveries')
    .select('id')
    .where('message_id', '=', d.message_id)
    .where('channel_id', '=', d.channel_id)
    .where('created_at', '>', d.created_at)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts a delivery row (a fresh pending series). */
export async function insertDelivery(db: Q, row: DeliveriesTable): Promise<void> {
  await db.insertInto('deliveries').values(row).execute();
}

/** Reads a channel's enabled flag; undefined when it no longer exists. */
export async function channelEnabled(db: Q, channelId: string): Promise<number | undefined> {
  const row = await db.selectFrom('channels').select('enabled').where('id', '=', channelId).executeTakeFirst();
  return row?.enabled;
}

// Plain data access for notification channels; no business rules here.
import type { Kysely, Transaction } from 'kysely';
import type { ChannelsTable, DB, DeliveryAttemptsTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** A channel as stored (the secret included: never hand this row to a view). */
export type ChannelRow = ChannelsTable;

/** A channel as the admin surface may show it: the secret reduced to whether one is set. */
export type ChannelSummary = Omit<ChannelRow, 'secret'> & { hasSecret: boolean; createdByUsername: string | null };

/** Inserts a channel. */
export async function insertChannel(db: Q, row: ChannelRow): Promise<void> {
  await db.insertInto('channels').values(row).execute();
}

/** One channel by id (with its secret, for the service only). */
export function findChannel(db: Q, id: string): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Applies changed fields to a channel; returns whether it existed. */
export async function updateChannelRow(
  db: Q,
  id: string,
  changes: Partial<Pick<ChannelRow, 'url' | 'classes' | 'enabled' | 'secret' | 'updated_at'>>,
): Promise<boolean> {
  const result = await db.updateTable('channels').set(changes).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Marks a channel's pending deliveries cancelled (before the channel goes), so they never block pruning. */
export async function cancelPendingDeliveries(db: Q, channelId: string, now: number): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ state: 'cancelled', last_error: 'channel deleted', lease_owner: null, lease_until: null, updated_at: now })
    .where('channel_id', '=', channelId)
    .where('state', '=', 'pending')
    .execute();
}

/** Deletes a channel; its delivery records stay, with the channel reference cleared. */
export async function deleteChannelRow(db: Q, id: string): Promise<void> {
  await db.deleteFrom('channels').where('id', '=', id).execute();
}

function summaries(db: Q) {
  return db
    .selectFrom('channels as c')
    .leftJoin('accounts as a', 'a.id', 'c.created_by')
    .select([
      'c.id',
      'c.url',
      'c.classes',
      'c.enabled',
      'c.consecutive_failures',
      'c.last_error',
      'c.last_error_at',
      'c.last_success_at',
      'c.failing_since',
      'c.created_at',
      'c.updated_at',
      'c.created_by',
      'a.username as created_by_username',
      (eb) => eb.case().when('c.secret', 'is not', null).then(1).else(0).end().as('has_secret'),
    ]);
}

function toSummary({
  has_secret,
  created_by_username,
  ...r
}: Awaited<ReturnType<ReturnType<typeof summaries>['execute']>>[number]): ChannelSummary {
  return { ...r, hasSecret: Number(has_secret) === 1, createdByUsername: created_by_username };
}

/** One channel without its secret. */
export async function findChannelSummary(db: Q, id: string): Promise<ChannelSummary | undefined> {
  const row = await summaries(db).where('c.id', '=', id).executeTakeFirst();
  return row ? toSummary(row) : undefined;
}

/** A page of channels, oldest first, without their secrets. */
export async function listChannelSummaries(db: Q, p: { offset: number; limit: number }): Promise<ChannelSummary[]> {
  const rows = await summaries(db).orderBy('c.created_at').orderBy('c.id').offset(p.offset).limit(p.limit).execute();
  return rows.map(toSummary);
}

/** Up to `limit` channels after the position (created_at, id), oldest first, without their secrets: keyset paging. */
export async function listChannelSummariesAfter(
  db: Q,
  after: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<ChannelSummary[]> {
  const rows = await summaries(db)
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb.or([
          eb('c.created_at', '>', after!.createdAt),
          eb.and([eb('c.created_at', '=', after!.createdAt), eb('c.id', '>', after!.id)]),
        ]),
      ),
    )
    .orderBy('c.created_at')
    .orderBy('c.id')
    .limit(limit)
    .execute();
  return rows.map(toSummary);
}

/** How many channels exist. */
export async function countChannels(db: Q): Promise<number> {
  const row = await db
    .selectFrom('channels')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One attempt to a channel with the message it carried (the headline names the message in the list). */
export type ChannelAttempt = DeliveryAttemptsTable & { message_id: string; headline: string };

/** A channel's latest attempts, newest first, each with its message's id and headline. */
export function recentAttemptsOfChannel(db: Q, channelId: string, limit: number): Promise<ChannelAttempt[]> {
  return db
    .selectFrom('delivery_attempts as a')
    .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .selectAll('a')
    .select(['d.message_id', 'm.headline'])
    .where('d.channel_id', '=', channelId)
    .orderBy('a.started_at', 'desc')
    .orderBy('a.delivery_id')
    .orderBy('a.attempt_no', 'desc')
    .limit(limit)
    .execute();
}

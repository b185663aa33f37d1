// Plain queries for what the pages show about deliveries, and the re-send's reads and insert; no business rules.
import { sql, type ExpressionBuilder, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB, DeliveriesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** A delivery with its channel's URL (null once deleted), enabled flag, and whether a later re-send replaced it. */
export type DeliveryWithChannel = Selectable<DeliveriesTable> & { channel_url: string | null; channel_enabled: number | null; superseded: number };

// A later series (a re-send) of the same message to the same channel as `d`.
const laterSeries = (eb: ExpressionBuilder<DB & { d: DeliveriesTable }, 'd'>) =>
  eb.exists(
    eb
      .selectFrom('deliveries as later')
      .select('later.id')
      .whereRef('later.message_id', '=', 'd.message_id')
      .whereRef('later.channel_id', '=', 'd.channel_id')
      .whereRef('later.created_at', '>', 'd.created_at'),
  );

/** Deliveries of a message, undelivered first (dead, pending, cancelled, then delivered), oldest series first within each. */
export function deliveriesOfMessage(db: Q, messageId: string, limit: number): Promise<DeliveryWithChannel[]> {
  return db
    .selectFrom('deliveries as d')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .selectAll('d')
    .select(['c.url as channel_url', 'c.enabled as channel_enabled'])
    .select((eb) => eb.case().when(laterSeries(eb)).then(1).else(0).end().as('superseded'))
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

/** Dead-lettered and cancelled deliveries that no later series replaced, newest first, with their message headline. */
export function undeliveredLatest(db: Q, limit: number) {
  return db
    .selectFrom('deliveries as d')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .select(['d.id', 'd.message_id', 'd.channel_id', 'd.state', 'd.attempts', 'd.last_error', 'd.updated_at', 'm.headline', 'c.url as channel_url', 'c.enabled as channel_enabled'])
    // Literal states, so the planner (SQLite's too) can use the partial index deliveries_undelivered.
    .where(sql<boolean>`d.state in ('dead', 'cancelled')`)
    .where((eb) => eb.not(laterSeries(eb)))
    .orderBy('d.updated_at', 'desc')
    .orderBy('d.id')
    .limit(limit)
    .execute();
}

/** One delivery by id; on PostgreSQL row-locked for the rest of the transaction. */
export function findDeliveryForUpdate(db: Q, dialect: Dialect, id: string): Promise<Selectable<DeliveriesTable> | undefined> {
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
export async function insertDelivery(db: Q, row: Insertable<DeliveriesTable>): Promise<void> {
  await db.insertInto('deliveries').values(row).execute();
}

/** Reads a channel's enabled flag; undefined when it no longer exists. */
export async function channelEnabled(db: Q, channelId: string): Promise<number | undefined> {
  const row = await db.selectFrom('channels').select('enabled').where('id', '=', channelId).executeTakeFirst();
  return row?.enabled;
}

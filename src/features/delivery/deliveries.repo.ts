// Plain queries for what the pages show about deliveries, and the re-send's reads and insert; no business rules.
import { sql, type ExpressionBuilder, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB, DeliveriesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** A delivery with its channel's URL (null once deleted), enabled flag, and whether a later re-send replaced it. */
export type DeliveryWithChannel = Selectable<DeliveriesTable> & {
  channel_url: string | null;
  channel_enabled: number | null;
  superseded: number;
};

/** A later series (a re-send) of the same message to the same channel as `d` exists. */
export const laterSeries = (eb: ExpressionBuilder<DB & { d: DeliveriesTable }, 'd'>) =>
  eb.exists(
    eb
      .selectFrom('deliveries as later')
      .select('later.id')
      .whereRef('later.message_id', '=', 'd.message_id')
      .whereRef('later.channel_id', '=', 'd.channel_id')
      .whereRef('later.created_at', '>', 'd.created_at'),
  );

/**
 * Deliveries of a message, undelivered first (dead, pending, cancelled, then delivered), oldest series first within
 * each.
 */
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
export async function countDeliveriesOfMessage(
  db: Q,
  messageId: string,
): Promise<Record<DeliveriesTable['state'], number>> {
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

/** Which deliveries the admin's list shows: one state or all, one channel or all. */
export interface DeliveryFilter {
  state?: DeliveriesTable['state'];
  channelId?: string;
}

/** The order a filter's list is kept in; each one an existing index keeps (see deliveriesQuery). */
export type DeliveryOrder = 'changed' | 'due' | 'message';

/**
 * Dead-lettered and cancelled: most recently changed first; pending: next attempt first; all and delivered: newest
 * messages first.
 */
export function deliveryOrder(filter: DeliveryFilter): DeliveryOrder {
  return filter.state === 'dead' || filter.state === 'cancelled'
    ? 'changed'
    : filter.state === 'pending'
      ? 'due'
      : 'message';
}

/** Where a keyset page starts: the sort values of the last row of the previous page, in the filter's order. */
export type DeliveryPosition =
  | { order: 'changed'; updatedAt: number; id: string }
  | { order: 'due'; nextAttemptAt: number; id: string }
  | { order: 'message'; messageCreatedAt: number; messageId: string; id: string };

/**
 * Deliveries with their message (headline, class, time), channel URL and whether a re-send replaced them, filtered
 * and sorted, each view in the order an existing index keeps, so a page reads about its own rows however large the
 * table (no index on deliveries is added for this list: each one would cost the worker on every update): dead-lettered
 * and cancelled, most recently changed first (the partial index deliveries_undelivered on updated_at); pending, next
 * attempt first (deliveries_due); all and delivered, the newest messages' first (messages_created, then each message's
 * deliveries by deliveries_message). Ties by delivery id.
 */
function deliveriesQuery(db: Q, filter: DeliveryFilter) {
  const state = filter.state;
  const order = deliveryOrder(filter);
  return (
    db
      .selectFrom('deliveries as d')
      .innerJoin('messages as m', 'm.id', 'd.message_id')
      .leftJoin('channels as c', 'c.id', 'd.channel_id')
      .select([
        'd.id',
        'd.message_id',
        'd.channel_id',
        'd.state',
        'd.attempts',
        'd.last_error',
        'd.created_at',
        'd.updated_at',
        'd.next_attempt_at',
        'd.delivered_at',
      ])
      .select([
        'm.headline',
        'm.class as message_class',
        'm.created_at as message_created_at',
        'c.url as channel_url',
        'c.enabled as channel_enabled',
      ])
      .select((eb) => eb.case().when(laterSeries(eb)).then(1).else(0).end().as('superseded'))
      .$if(state !== undefined, (q) => q.where('d.state', '=', state!))
      // Literal states beside the filter, so the planner (SQLite's too) can use the partial index
      // deliveries_undelivered.
      .$if(state === 'dead' || state === 'cancelled', (q) => q.where(sql<boolean>`d.state in ('dead', 'cancelled')`))
      .$if(filter.channelId !== undefined, (q) => q.where('d.channel_id', '=', filter.channelId!))
      .$if(order === 'changed', (q) => q.orderBy('d.updated_at', 'desc'))
      .$if(order === 'due', (q) => q.orderBy('d.next_attempt_at'))
      .$if(order === 'message', (q) => q.orderBy('m.created_at', 'desc').orderBy('m.id', 'desc'))
      .orderBy('d.id')
  );
}

/** One row of the deliveries list. */
export type DeliveryListRow = Awaited<ReturnType<ReturnType<typeof deliveriesQuery>['execute']>>[number];

/** A page of the filtered deliveries by offset (the console's numbered pages). */
export function listDeliveries(
  db: Q,
  filter: DeliveryFilter,
  p: { offset: number; limit: number },
): Promise<DeliveryListRow[]> {
  return deliveriesQuery(db, filter).offset(p.offset).limit(p.limit).execute();
}

/** Up to `limit` of the filtered deliveries after `after` (keyset paging: stable while rows are added). */
export function listDeliveriesAfter(
  db: Q,
  filter: DeliveryFilter,
  after: DeliveryPosition | undefined,
  limit: number,
): Promise<DeliveryListRow[]> {
  return deliveriesQuery(db, filter)
    .$if(after !== undefined, (q) =>
      q.where((eb) => {
        const a = after!;
        if (a.order === 'changed')
          return eb.or([
            eb('d.updated_at', '<', a.updatedAt),
            eb.and([eb('d.updated_at', '=', a.updatedAt), eb('d.id', '>', a.id)]),
          ]);
        if (a.order === 'due')
          return eb.or([
            eb('d.next_attempt_at', '>', a.nextAttemptAt),
            eb.and([eb('d.next_attempt_at', '=', a.nextAttemptAt), eb('d.id', '>', a.id)]),
          ]);
        return eb.or([
          eb('m.created_at', '<', a.messageCreatedAt),
          eb.and([eb('m.created_at', '=', a.messageCreatedAt), eb('m.id', '<', a.messageId)]),
          eb.and([eb('m.created_at', '=', a.messageCreatedAt), eb('m.id', '=', a.messageId), eb('d.id', '>', a.id)]),
        ]);
      }),
    )
    .limit(limit)
    .execute();
}

/** One delivery as the list shows it, or undefined. */
export function findDeliveryRow(db: Q, id: string): Promise<DeliveryListRow | undefined> {
  return deliveriesQuery(db, {}).where('d.id', '=', id).executeTakeFirst();
}

/** A delivery's channel: its id and URL (both null once deleted); undefined when the delivery does not exist. */
export function deliveryChannel(
  db: Q,
  deliveryId: string,
): Promise<{ id: string | null; url: string | null } | undefined> {
  return db
    .selectFrom('deliveries as d')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .select(['c.id as id', 'c.url as url'])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

/**
 * The channel a "re-send all dead letters" would re-queue for (id, URL and whether it is enabled); undefined when gone.
 */
export function resendChannel(db: Q, channelId: string) {
  return db.selectFrom('channels').select(['id', 'url', 'enabled']).where('id', '=', channelId).executeTakeFirst();
}

/** Channels to filter by, by URL (id and URL only). */
export function channelChoices(db: Q, limit: number) {
  return db.selectFrom('channels').select(['id', 'url']).orderBy('url').orderBy('id').limit(limit).execute();
}

/** One delivery by id; on PostgreSQL row-locked for the rest of the transaction. */
export function findDeliveryForUpdate(
  db: Q,
  dialect: Dialect,
  id: string,
): Promise<Selectable<DeliveriesTable> | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('id', '=', id)
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
}

/** Which of the given deliveries a later series (a re-send of the same message to the same channel) replaced. */
export async function withLaterSeries(db: Q, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks(ids)) {
    const rows = await db
      .selectFrom('deliveries as d')
      .select('d.id')
      .where('d.id', 'in', part)
      .where(laterSeries)
      .execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/**
 * The dead-lettered deliveries of a channel that no re-send replaced, row-locked on PostgreSQL (in id order, so
 * concurrent lockers never deadlock).
 */
export function lockDeadOfChannel(db: Q, dialect: Dialect, channelId: string): Promise<Selectable<DeliveriesTable>[]> {
  return db
    .selectFrom('deliveries as d')
    .selectAll('d')
    .where('d.channel_id', '=', channelId)
    .where('d.state', '=', 'dead')
    .where((eb) => eb.not(laterSeries(eb)))
    .orderBy('d.id')
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .execute();
}

/** Inserts delivery rows (fresh pending series), a few hundred per statement (SQLite caps bound parameters). */
export async function insertDeliveries(db: Q, rows: Insertable<DeliveriesTable>[]): Promise<void> {
  for (const part of chunks(rows)) await db.insertInto('deliveries').values(part).execute();
}

/** The enabled flag of each given channel that still exists. */
export async function channelsEnabled(db: Q, channelIds: string[]): Promise<Map<string, number>> {
  const flags = new Map<string, number>();
  for (const part of chunks(channelIds)) {
    for (const r of await db.selectFrom('channels').select(['id', 'enabled']).where('id', 'in', part).execute())
      flags.set(r.id, r.enabled);
  }
  return flags;
}

function chunks<T>(items: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** How many dead-lettered deliveries of a channel no re-send has replaced yet (what "re-send all" would re-queue). */
export async function countResendableDead(db: Q, channelId: string): Promise<number> {
  const row = await db
    .selectFrom('deliveries as d')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('d.channel_id', '=', channelId)
    .where('d.state', '=', 'dead')
    .where((eb) => eb.not(laterSeries(eb)))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

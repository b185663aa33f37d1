// Where one message went: its deliveries with their channels, for the message detail page.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, DeliveriesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** One delivery of a message, with its channel's URL (null once the channel is deleted). */
export interface DeliveryStatusRow {
  id: string;
  channelId: string | null;
  channelUrl: string | null;
  state: DeliveriesTable['state'];
  attempts: number;
  nextAttemptAt: number;
  deliveredAt: number | null;
  lastError: string | null;
  updatedAt: number;
}

/** How many deliveries of the message are in each state. */
export type DeliveryStateCounts = Record<DeliveriesTable['state'], number>;

/** The message's deliveries, dead-lettered first, then pending, then delivered; at most `limit`. */
export async function listDeliveriesForMessage(db: Q, messageId: string, limit: number): Promise<DeliveryStatusRow[]> {
  const rows = await db
    .selectFrom('deliveries as d')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .select([
      'd.id',
      'd.channel_id',
      'c.url',
      'd.state',
      'd.attempts',
      'd.next_attempt_at',
      'd.delivered_at',
      'd.last_error',
      'd.updated_at',
    ])
    .where('d.message_id', '=', messageId)
    .orderBy(sql`case d.state when 'dead' then 0 when 'pending' then 1 when 'delivered' then 2 else 3 end`)
    .orderBy('d.created_at')
    .orderBy('d.id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    channelId: r.channel_id,
    channelUrl: r.url,
    state: r.state,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    deliveredAt: r.delivered_at,
    lastError: r.last_error,
    updatedAt: r.updated_at,
  }));
}

/** Counts of the message's deliveries per state. */
export async function countDeliveriesByState(db: Q, messageId: string): Promise<DeliveryStateCounts> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
    .where('message_id', '=', messageId)
    .groupBy('state')
    .execute();
  const counts: DeliveryStateCounts = { pending: 0, delivered: 0, dead: 0, cancelled: 0 };
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

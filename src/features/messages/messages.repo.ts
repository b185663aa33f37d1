// Plain data access for the message store; no business rules here.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, MessagesTable } from '../../db/schema.ts';
import type { MessageClass } from './classes.ts';

type Q = Kysely<DB> | Transaction<DB>;

export type MessageRow = MessagesTable;

/** A position in the newest-first order: strictly older than (createdAt, id). */
export interface MessageCursor {
  createdAt: number;
  id: string;
}

/** Inserts a message row. */
export async function insertMessage(db: Q, row: MessageRow): Promise<void> {
  await db.insertInto('messages').values(row).execute();
}

/**
 * Adds one pending delivery, due now, per enabled channel whose classes include `class`, in a single
 * INSERT ... SELECT (no per-channel round trip, so 10,000 channels cost one statement). A delivery's id is
 * "<message id>.<channel id>": unique, and a repeat of the same pair is refused by the primary key.
 */
export async function insertDeliveriesForClass(
  db: Q,
  p: { messageId: string; class: MessageClass; now: number },
): Promise<number> {
  const result = await db
    .insertInto('deliveries')
    .columns(['id', 'message_id', 'channel_id', 'state', 'attempts', 'next_attempt_at', 'created_at', 'updated_at'])
    .expression((eb) =>
      eb
        .selectFrom('channels')
        .select([
          sql<string>`cast(${p.messageId} as text) || '.' || channels.id`.as('id'),
          sql<string>`cast(${p.messageId} as text)`.as('message_id'),
          'channels.id as channel_id',
          sql<string>`'pending'`.as('state'),
          sql<number>`0`.as('attempts'),
          sql<number>`cast(${p.now} as bigint)`.as('next_attempt_at'),
          sql<number>`cast(${p.now} as bigint)`.as('created_at'),
          sql<number>`cast(${p.now} as bigint)`.as('updated_at'),
        ])
        .where('channels.enabled', '=', 1)
        .where(sql<boolean>`',' || channels.classes || ',' like ${`%,${p.class},%`}`),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

/** One message by id. */
export function findMessage(db: Q, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Ids, among `ids`, of messages that exist, with their created_at. */
export function findMessagesCreatedAt(db: Q, ids: string[]): Promise<{ id: string; created_at: number }[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('messages').select(['id', 'created_at']).where('id', 'in', ids).execute();
}

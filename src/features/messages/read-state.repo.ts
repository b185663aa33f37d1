// Plain data access for per-account read state: the read-all watermark and individual read marks.
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { DB, MessagesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** The account's watermark (messages created at or before it are read), or undefined if never set. */
export async function findWatermark(db: Q, accountId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('message_read_marks')
    .select('read_through')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.read_through;
}

/** Raises the watermark to `readThrough` (never lowers it). */
export async function raiseWatermark(db: Q, accountId: string, readThrough: number, now: number): Promise<void> {
  await db
    .insertInto('message_read_marks')
    .values({ account_id: accountId, read_through: readThrough, updated_at: now })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        read_through: sql<number>`case when excluded.read_through > message_read_marks.read_through then excluded.read_through else message_read_marks.read_through end`,
        updated_at: sql<number>`excluded.updated_at`,
      }),
    )
    .execute();
}

/** The bell counts this many at most; the layout shows more as "99+". */
const UNREAD_CAP = 100;

/**
 * Unread messages of the account (above its watermark and not read individually), counted only up to UNREAD_CAP:
 * the scan stops there, whatever the store's size. The cap is a literal: SQLite plans a bound LIMIT on the subquery
 * several times slower than a constant one.
 */
export async function countUnread(db: Q, accountId: string): Promise<number> {
  const row = await db
    .selectFrom(
      db
        .selectFrom('messages as m')
        .select(sql<number>`1`.as('one'))
        .where(unreadBy(db, accountId))
        .limit(sql.lit(UNREAD_CAP))
        .as('u'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Messages (`messages as m`) the account has not read: above its watermark and without an individual read mark. */
export function unreadBy(db: Q, accountId: string) {
  const watermark = db
    .selectFrom('message_read_marks as w')
    .select('w.read_through')
    .where('w.account_id', '=', accountId);
  return (eb: ExpressionBuilder<DB & { m: MessagesTable }, 'm'>) =>
    eb.and([
      eb('m.created_at', '>', sql<number>`coalesce((${watermark}), -1)`),
      eb.not(eb.exists(readMarkOf(eb, accountId))),
    ]);
}

/** The account's individual read mark of message `m`, as a subquery. */
function readMarkOf(eb: ExpressionBuilder<DB & { m: MessagesTable }, 'm'>, accountId: string) {
  return eb
    .selectFrom('message_reads as r')
    .select(sql<number>`1`.as('one'))
    .where('r.account_id', '=', accountId)
    .whereRef('r.message_id', '=', 'm.id');
}

/** Which of `ids` the account has read individually. */
export async function findReadIds(db: Q, accountId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('message_reads')
    .select('message_id')
    .where('account_id', '=', accountId)
    .where('message_id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.message_id));
}

/** Records individual reads; already-read pairs are left as they are. */
export async function insertReads(
  db: Q,
  accountId: string,
  messages: { id: string; created_at: number }[],
  now: number,
): Promise<void> {
  if (messages.length === 0) return;
  await db
    .insertInto('message_reads')
    .values(
      messages.map((m) => ({
        account_id: accountId,
        message_id: m.id,
        message_created_at: m.created_at,
        read_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['account_id', 'message_id']).doNothing())
    .execute();
}

/** Marks read every message created after `after` (the newest millisecond: a handful of rows). */
export function insertReadsAbove(db: Q, accountId: string, after: number, now: number): Promise<void> {
  return insertReadsBetween(db, { accountId, after, now });
}

/** The created_at of the account's oldest unread message above the watermark, or undefined when none is unread. */
export async function oldestUnreadCreatedAt(
  db: Q,
  accountId: string,
  watermark: number | undefined,
): Promise<number | undefined> {
  let q = db
    .selectFrom('messages as m')
    .select('m.created_at')
    .where((eb) => eb.not(eb.exists(readMarkOf(eb, accountId))))
    .orderBy('m.created_at', 'asc')
    .limit(1);
  if (watermark !== undefined) q = q.where('m.created_at', '>', watermark);
  return (await q.executeTakeFirst())?.created_at;
}

/** The newest message's created_at (index-backed), or undefined for an empty store. */
export async function newestCreatedAt(db: Q): Promise<number | undefined> {
  const row = await db
    .selectFrom('messages')
    .select('created_at')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.created_at;
}

/** Drops individual read marks the watermark already covers. */
export async function deleteReadsThrough(db: Q, accountId: string, readThrough: number): Promise<void> {
  await db
    .deleteFrom('message_reads')
    .where('account_id', '=', accountId)
    .where('message_created_at', '<=', readThrough)
    .execute();
}

/** Marks read, one row each, the messages created after `after` (up to `through`, except `exceptId`, when given). */
export async function insertReadsBetween(
  db: Q,
  p: { accountId: string; after: number; through?: number; exceptId?: string; now: number },
): Promise<void> {
  await db
    .insertInto('message_reads')
    .columns(['account_id', 'message_id', 'message_created_at', 'read_at'])
    .expression((eb) =>
      eb
        .selectFrom('messages')
        .select([
          sql<string>`cast(${p.accountId} as text)`.as('account_id'),
          'messages.id as message_id',
          'messages.created_at as message_created_at',
          sql<number>`cast(${p.now} as bigint)`.as('read_at'),
        ])
        .where('messages.created_at', '>', p.after)
        .$if(p.through !== undefined, (q) => q.where('messages.created_at', '<=', p.through!))
        .$if(p.exceptId !== undefined, (q) => q.where('messages.id', '<>', p.exceptId!)),
    )
    .onConflict((oc) => oc.columns(['account_id', 'message_id']).doNothing())
    .execute();
}

/** Sets the watermark to `readThrough`, lower than before (only mark-unread lowers it). */
export async function lowerWatermark(db: Q, accountId: string, readThrough: number, now: number): Promise<void> {
  await db
    .updateTable('message_read_marks')
    .set({ read_through: readThrough, updated_at: now })
    .where('account_id', '=', accountId)
    .execute();
}

/** Removes one individual read mark. */
export async function deleteRead(db: Q, accountId: string, messageId: string): Promise<void> {
  await db
    .deleteFrom('message_reads')
    .where('account_id', '=', accountId)
    .where('message_id', '=', messageId)
    .execute();
}

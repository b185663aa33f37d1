// Queries behind the inbox: a filtered newest-first page for one account, and the page's delivery trouble.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { laterSeries } from '../delivery/deliveries.repo.ts';
import type { Cause, MessageClass } from '../messages/classes.ts';
import type { MessageCursor, MessageRow } from '../messages/messages.repo.ts';
import { unreadBy } from '../messages/read-state.repo.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** What the inbox is narrowed to; every part optional. The console uses the first three; the API all of them. */
export interface InboxFilter {
  unreadOnly?: boolean;
  class?: MessageClass;
  cause?: Cause;
  /** Only messages the account has read (the opposite of unreadOnly). */
  readOnly?: boolean;
  /** The subject's bare kind and key, matched exactly. */
  subjectKind?: string;
  subjectKey?: string;
  /** Stored at or after this time (epoch ms). */
  since?: number;
  /** Stored before this time (epoch ms). */
  until?: number;
}

/**
 * One page of messages, newest first, strictly older than `before` (keyset on created_at, id), narrowed by the
 * filter; "unread" means above the account's watermark and without an individual read mark.
 */
export function listInboxMessages(
  db: Q,
  p: { accountId: string; filter: InboxFilter; before?: MessageCursor; limit: number },
): Promise<MessageRow[]> {
  let q = db.selectFrom('messages as m').selectAll('m');
  const before = p.before;
  if (before) {
    q = q
      .where('m.created_at', '<=', before.createdAt)
      .where((eb) => eb.or([eb('m.created_at', '<', before.createdAt), eb('m.id', '<', before.id)]));
  }
  if (p.filter.class) q = q.where('m.class', '=', p.filter.class);
  if (p.filter.cause) q = q.where('m.cause', '=', p.filter.cause);
  if (p.filter.unreadOnly) q = q.where(unreadBy(db, p.accountId));
  if (p.filter.readOnly) {
    const unread = unreadBy(db, p.accountId);
    q = q.where((eb) => eb.not(unread(eb)));
  }
  if (p.filter.subjectKind !== undefined) q = q.where('m.subject_kind', '=', p.filter.subjectKind);
  if (p.filter.subjectKey !== undefined) q = q.where('m.subject_key', '=', p.filter.subjectKey);
  if (p.filter.since !== undefined) q = q.where('m.created_at', '>=', p.filter.since);
  if (p.filter.until !== undefined) q = q.where('m.created_at', '<', p.filter.until);
  return q.orderBy('m.created_at', 'desc').orderBy('m.id', 'desc').limit(p.limit).execute();
}

/**
 * Per message among `ids` (one page, one grouped query over the deliveries_message index): how many of its
 * deliveries are dead-lettered with no re-send after them, and how many are pending after a failed attempt.
 */
export async function deliveryTrouble(db: Q, ids: string[]): Promise<Map<string, { dead: number; failing: number }>> {
  const out = new Map<string, { dead: number; failing: number }>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('deliveries as d')
    .select(['d.message_id', 'd.state'])
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('d.message_id', 'in', ids)
    .where((eb) =>
      eb.or([
        eb.and([eb('d.state', '=', 'dead'), eb.not(laterSeries(eb))]),
        eb.and([eb('d.state', '=', 'pending'), eb('d.attempts', '>', 0)]),
      ]),
    )
    .groupBy(['d.message_id', 'd.state'])
    .execute();
  for (const row of rows) {
    const entry = out.get(row.message_id) ?? { dead: 0, failing: 0 };
    if (row.state === 'dead') entry.dead += Number(row.n);
    else entry.failing += Number(row.n);
    out.set(row.message_id, entry);
  }
  return out;
}

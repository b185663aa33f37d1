// Per-account read state. Cost never grows with the store: "read all" moves one watermark row, individual
// reads above it are rows that get folded into the watermark as soon as they form an unbroken run, and the
// unread count stops scanning at its cap. The watermark always stays below the newest message's millisecond
// (reads in that millisecond are kept as rows), so a message stored later in the same millisecond is unread.
import type { Deps } from '../../deps.ts';
import { findMessagesCreatedAt } from './messages.repo.ts';
import {
  countUnread,
  deleteRead,
  deleteReadsThrough,
  findReadIds,
  findWatermark,
  insertReads,
  insertReadsAbove,
  insertReadsBetween,
  lowerWatermark,
  newestCreatedAt,
  oldestUnreadCreatedAt,
  raiseWatermark,
} from './read-state.repo.ts';

/**
 * The watermark never rises past now minus this margin: a message's created_at is taken just before its
 * transaction commits (and `svc emit` may run on a host with a slightly different clock), so a message can
 * appear with a created_at a little in the past. Reads inside the margin are kept as rows instead.
 */
const WATERMARK_MARGIN_MS = 5 * 60_000;

/** Most ids accepted by one mark-read request. */
export const MARK_READ_MAX = 200;

/** The account's unread messages, counted up to UNREAD_CAP. */
export function unreadCount(deps: Deps, accountId: string): Promise<number> {
  return countUnread(deps.db, accountId);
}

/** Which of the given messages the account has read. */
export async function readMessageIds(
  deps: Deps,
  accountId: string,
  messages: { id: string; created_at: number }[],
): Promise<Set<string>> {
  const watermark = await findWatermark(deps.db, accountId);
  const above = messages.filter((m) => watermark === undefined || m.created_at > watermark);
  const read = await findReadIds(
    deps.db,
    accountId,
    above.map((m) => m.id),
  );
  for (const m of messages) if (watermark !== undefined && m.created_at <= watermark) read.add(m.id);
  return read;
}

/** Marks the given messages read for this account only; unknown ids are ignored. */
export async function markRead(deps: Deps, accountId: string, ids: string[]): Promise<void> {
  const unique = [...new Set(ids)].slice(0, MARK_READ_MAX);
  if (unique.length === 0) return;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const watermark = await findWatermark(trx, accountId);
    const found = await findMessagesCreatedAt(trx, unique);
    const above = found.filter((m) => watermark === undefined || m.created_at > watermark);
    await insertReads(trx, accountId, above, now);
    // Fold the unbroken run of read messages at the bottom into the watermark, so read rows stay few.
    const oldestUnread = await oldestUnreadCreatedAt(trx, accountId, watermark);
    const newest = oldestUnread === undefined ? await newestCreatedAt(trx) : undefined;
    const run = oldestUnread !== undefined ? oldestUnread - 1 : newest !== undefined ? newest - 1 : undefined;
    const through = run === undefined ? undefined : Math.min(run, now - WATERMARK_MARGIN_MS);
    if (through !== undefined && (watermark === undefined || through > watermark)) {
      await raiseWatermark(trx, accountId, through, now);
      await deleteReadsThrough(trx, accountId, through);
    }
  });
}

/** Marks every message now in the store read for this account only. */
export async function markAllRead(deps: Deps, accountId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const newest = await newestCreatedAt(trx);
    if (newest === undefined) return;
    const through = Math.min(newest - 1, now - WATERMARK_MARGIN_MS);
    await raiseWatermark(trx, accountId, through, now);
    // The newest millisecond's messages are marked one by one: a later message in that millisecond stays unread.
    await insertReadsAbove(trx, accountId, through, now);
    await deleteReadsThrough(trx, accountId, through);
  });
}

/**
 * Marks one message read because its page was opened: a single conditional insert (a GET that writes must stay
 * cheap and idempotent), skipped when the message is already read. The watermark is folded by the next markRead.
 */
export async function markOpened(
  deps: Deps,
  accountId: string,
  message: { id: string; created_at: number },
  alreadyRead: boolean,
): Promise<void> {
  if (alreadyRead) return;
  await insertReads(deps.db, accountId, [message], deps.clock.now());
}

/**
 * Marks one message unread for this account only; an unknown id is ignored. Under the watermark, the watermark drops
 * to just below the message and the messages it covered above that point are kept read as rows (one INSERT ... SELECT).
 */
export async function markUnread(deps: Deps, accountId: string, id: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const [message] = await findMessagesCreatedAt(trx, [id]);
    if (!message) return;
    const watermark = await findWatermark(trx, accountId);
    if (watermark !== undefined && message.created_at <= watermark) {
      const below = message.created_at - 1;
      await insertReadsBetween(trx, { accountId, after: below, through: watermark, exceptId: id, now });
      await lowerWatermark(trx, accountId, below, now);
    }
    await deleteRead(trx, accountId, id);
  });
}

/** Marks each of the given messages unread for this account only (at most MARK_READ_MAX); unknown ids are ignored. */
export async function markManyUnread(deps: Deps, accountId: string, ids: string[]): Promise<void> {
  for (const id of [...new Set(ids)].slice(0, MARK_READ_MAX)) await markUnread(deps, accountId, id);
}

// Reading the message store: newest-first pages for an account, with that account's read marks.
import type { Deps } from '../../deps.ts';
import { messageDeliveries, type MessageDeliveriesView } from '../delivery/deliveries-view.service.ts';
import { CAUSES, CLASSES, type Cause, type MessageClass } from '../messages/classes.ts';
import { deliveryTrouble, listInboxMessages, type InboxFilter } from './inbox.repo.ts';
import { findMessage, type MessageCursor, type MessageRow } from '../messages/messages.repo.ts';
import { markOpened, readMessageIds } from '../messages/read-state.service.ts';

export type { InboxFilter } from './inbox.repo.ts';

/** Messages per inbox page. */
export const INBOX_PAGE_SIZE = 50;

/** A message as the inbox shows it to one account; `trouble` (admins only) counts its failing deliveries. */
export interface InboxItem extends MessageRow {
  read: boolean;
  trouble?: { dead: number; failing: number };
}

/** One page of the inbox and the cursor of the next (older) page, if any. */
export interface InboxPage {
  items: InboxItem[];
  next: MessageCursor | undefined;
}

/** Encodes a cursor for a URL query: "<created_at>.<id>". */
export function encodeCursor(c: MessageCursor): string {
  return `${c.createdAt}.${c.id}`;
}

/** Decodes a cursor from a URL query; undefined when malformed. */
export function decodeCursor(raw: string): MessageCursor | undefined {
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,64})$/.exec(raw);
  if (!m) return undefined;
  return { createdAt: Number(m[1]), id: m[2]! };
}

/** Reads the inbox filter from query values; anything unknown is ignored (the filter is then not applied). */
export function parseFilter(q: { show?: string; class?: string; cause?: string }): InboxFilter {
  return {
    unreadOnly: q.show === 'unread' || undefined,
    class: (CLASSES as readonly string[]).includes(q.class ?? '') ? (q.class as MessageClass) : undefined,
    cause: (CAUSES as readonly string[]).includes(q.cause ?? '') ? (q.cause as Cause) : undefined,
  };
}

/**
 * A page of messages, newest first, strictly older than `before`, narrowed by `filter`. With `withTrouble` (admins)
 * each row carries how many of its deliveries are dead-lettered or still failing, read for the whole page at once.
 * `limit` is the page size (the console's INBOX_PAGE_SIZE unless the API's client asks for another).
 */
export async function inboxPage(
  deps: Deps,
  accountId: string,
  before: MessageCursor | undefined,
  filter: InboxFilter = {},
  withTrouble = false,
  limit = INBOX_PAGE_SIZE,
): Promise<InboxPage> {
  const rows = await listInboxMessages(deps.db, { accountId, filter, before, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const [read, trouble] = await Promise.all([
    readMessageIds(deps, accountId, page),
    withTrouble
      ? deliveryTrouble(
          deps.db,
          page.map((m) => m.id),
        )
      : Promise.resolve(undefined),
  ]);
  const last = page[page.length - 1];
  return {
    items: page.map((m) => ({ ...m, read: read.has(m.id), trouble: trouble?.get(m.id) })),
    next: rows.length > limit && last ? { createdAt: last.created_at, id: last.id } : undefined,
  };
}

/** One message with the account's read mark and where it was delivered. */
export interface MessageDetail {
  message: InboxItem;
  deliveries: MessageDeliveriesView;
}

/**
 * A message's detail with the account's read mark, or undefined when it does not exist (or was pruned). Reading it
 * changes nothing: the API reads this way, since a program fetching a message is not a person reading it.
 */
export async function messageDetail(deps: Deps, accountId: string, id: string): Promise<MessageDetail | undefined> {
  const message = await findMessage(deps.db, id);
  if (!message) return undefined;
  const [read, deliveries] = await Promise.all([
    readMessageIds(deps, accountId, [message]),
    messageDeliveries(deps, id),
  ]);
  return { message: { ...message, read: read.has(id) }, deliveries };
}

/**
 * A message's detail as its page shows it, or undefined when it does not exist (or was pruned). Opening the page
 * marks the message read for the account (`read` then says whether it already was).
 */
export async function openMessage(deps: Deps, accountId: string, id: string): Promise<MessageDetail | undefined> {
  const detail = await messageDetail(deps, accountId, id);
  if (!detail) return undefined;
  await markOpened(deps, accountId, detail.message, detail.message.read);
  return detail;
}

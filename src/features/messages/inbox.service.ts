// Reading the message store: newest-first pages for an account, with that account's read marks.
import type { Deps } from '../../deps.ts';
import { messageDeliveries, type MessageDeliveriesView } from '../delivery/deliveries-view.service.ts';
import { findMessage, listMessages, type MessageCursor, type MessageRow } from './messages.repo.ts';
import { readMessageIds } from './read-state.service.ts';

/** Messages per inbox page. */
export const INBOX_PAGE_SIZE = 50;

/** A message as the inbox shows it to one account. */
export interface InboxItem extends MessageRow {
  read: boolean;
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

/** A page of messages, newest first, strictly older than `before`. */
export async function inboxPage(deps: Deps, accountId: string, before: MessageCursor | undefined): Promise<InboxPage> {
  const rows = await listMessages(deps.db, { before, limit: INBOX_PAGE_SIZE + 1 });
  const page = rows.slice(0, INBOX_PAGE_SIZE);
  const read = await readMessageIds(deps, accountId, page);
  const last = page[page.length - 1];
  return {
    items: page.map((m) => ({ ...m, read: read.has(m.id) })),
    next: rows.length > INBOX_PAGE_SIZE && last ? { createdAt: last.created_at, id: last.id } : undefined,
  };
}

/** One message with the account's read mark and where it was delivered. */
export interface MessageDetail {
  message: InboxItem;
  deliveries: MessageDeliveriesView;
}

/** A message's detail, or undefined when it does not exist (or was pruned). */
export async function messageDetail(deps: Deps, accountId: string, id: string): Promise<MessageDetail | undefined> {
  const message = await findMessage(deps.db, id);
  if (!message) return undefined;
  const read = await readMessageIds(deps, accountId, [message]);
  return { message: { ...message, read: read.has(id) }, deliveries: await messageDeliveries(deps, id) };
}

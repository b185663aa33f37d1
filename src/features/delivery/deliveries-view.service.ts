// What the pages show about deliveries: per channel on a message with every attempt, and the admin's
// Deliveries list, filtered by state and channel. Who may see what (URLs, errors, excerpts) is decided by the views.
import type { DeliveriesTable } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { attemptsOf, type AttemptRow } from './attempts.repo.ts';
import {
  channelChoices,
  countDeliveriesOfMessage,
  countResendableDead,
  deliveriesOfMessage,
  deliveryChannel,
  deliveryOrder,
  findDeliveryRow,
  listDeliveries,
  listDeliveriesAfter,
  resendChannel,
  type DeliveryFilter,
  type DeliveryListRow,
  type DeliveryPosition,
} from './deliveries.repo.ts';
import { MAX_ATTEMPTS } from './retry-schedule.ts';
import type { MessageClass } from '../messages/classes.ts';

/** One attempt as the message page shows it. */
export interface AttemptView {
  attemptNo: number;
  startedAt: number;
  durationMs: number;
  verdict: 'delivered' | 'failed';
  statusCode: number | null;
  /** Admins only, like the excerpt: an error can quote the receiver. */
  error: string | null;
  /** The first bytes (at most 1 KiB) of the receiver's answer, as text. */
  excerpt: string | null;
}

/** One delivery series of a message to a channel, as the message page shows it. */
export interface DeliveryView {
  id: string;
  /**
   * The channel (id and URL both null once deleted); name it with channelLabel(), which shows the URL to admins only.
   */
  channel: { id: string | null; url: string | null };
  state: DeliveriesTable['state'];
  attempts: number;
  maxAttempts: number;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
  lastError: string | null;
  /** True when a later series (a re-send) replaced this one. */
  superseded: boolean;
  /** True when an admin may re-send it now. */
  resendable: boolean;
  attemptList: AttemptView[];
}

/** A message's deliveries as its page shows them: counts per state, and the first rows (undelivered first). */
export interface MessageDeliveriesView {
  counts: Record<DeliveriesTable['state'], number>;
  rows: DeliveryView[];
}

/** Rows shown on a message page; a fan-out to thousands of channels is summarised by the counts. */
export const MESSAGE_DELIVERY_ROWS = 100;

const attemptView = (a: AttemptRow): AttemptView => ({
  attemptNo: a.attempt_no,
  startedAt: a.started_at,
  durationMs: a.duration_ms,
  verdict: a.verdict,
  statusCode: a.status_code,
  error: a.error,
  excerpt: a.response_excerpt,
});

/** The per-channel delivery state of a message, with every attempt's verdict. */
export async function messageDeliveries(
  deps: Deps,
  messageId: string,
  limit = MESSAGE_DELIVERY_ROWS,
): Promise<MessageDeliveriesView> {
  const [rows, counts] = await Promise.all([
    deliveriesOfMessage(deps.db, messageId, limit),
    countDeliveriesOfMessage(deps.db, messageId),
  ]);
  const attempts = await attemptsOf(
    deps.db,
    rows.map((r) => r.id),
  );
  return {
    counts,
    rows: rows.map((r) => ({
      id: r.id,
      channel: { id: r.channel_id, url: r.channel_url },
      state: r.state,
      attempts: r.attempts,
      maxAttempts: MAX_ATTEMPTS,
      nextAttemptAt: r.state === 'pending' ? r.next_attempt_at : null,
      deliveredAt: r.delivered_at,
      lastError: r.last_error,
      superseded: Number(r.superseded) === 1,
      resendable:
        (r.state === 'dead' || r.state === 'cancelled') && Number(r.superseded) !== 1 && r.channel_enabled === 1,
      attemptList: (attempts.get(r.id) ?? []).map(attemptView),
    })),
  };
}

/** One row of the admin's Deliveries list. */
export interface DeliveryRow {
  id: string;
  messageId: string;
  headline: string;
  messageClass: MessageClass;
  channel: { id: string | null; url: string | null };
  state: DeliveriesTable['state'];
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  nextAttemptAt: number;
  deliveredAt: number | null;
  createdAt: number;
  /** When the row last changed: created, an attempt recorded, dead-lettered, cancelled. */
  at: number;
  superseded: boolean;
  resendable: boolean;
}

/** Rows per page of the Deliveries list. */
export const DELIVERIES_PAGE_SIZE = 50;
/** Channels offered in the list's channel filter. */
const CHANNEL_CHOICES = 500;

/** A page of the Deliveries list with what its filters and its "re-send all" offer need. */
export interface DeliveriesPage {
  filter: DeliveryFilter;
  page: number;
  hasNext: boolean;
  rows: DeliveryRow[];
  channels: { id: string; url: string }[];
  /**
   * With a channel filter: the channel (null once deleted) and how many of its dead letters a re-send would re-queue.
   */
  chosen?: { channel: { id: string; url: string; enabled: boolean } | null; deadLetters: number };
}

/** One page of deliveries, most recently changed first, filtered by state and channel. */
export async function deliveriesPage(deps: Deps, filter: DeliveryFilter, page: number): Promise<DeliveriesPage> {
  const current = Math.max(1, Math.floor(page) || 1);
  const found = await listDeliveries(deps.db, filter, {
    offset: (current - 1) * DELIVERIES_PAGE_SIZE,
    limit: DELIVERIES_PAGE_SIZE + 1,
  });
  const channels = await channelChoices(deps.db, CHANNEL_CHOICES);
  const chosen = filter.channelId ? await resendAllOffer(deps, filter.channelId) : undefined;
  const rows = found.slice(0, DELIVERIES_PAGE_SIZE).map(deliveryRow);
  return { filter, page: current, hasNext: found.length > DELIVERIES_PAGE_SIZE, rows, channels, chosen };
}

function deliveryRow(r: DeliveryListRow): DeliveryRow {
  return {
    id: r.id,
    messageId: r.message_id,
    headline: r.headline,
    messageClass: r.message_class,
    channel: { id: r.channel_id, url: r.channel_url },
    state: r.state,
    attempts: r.attempts,
    maxAttempts: MAX_ATTEMPTS,
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at,
    deliveredAt: r.delivered_at,
    createdAt: r.created_at,
    at: r.updated_at,
    superseded: Number(r.superseded) === 1,
    resendable:
      (r.state === 'dead' || r.state === 'cancelled') && Number(r.superseded) !== 1 && r.channel_enabled === 1,
  };
}

/** The sort values of a row in the list's order, as a flat list (what a cursor carries). */
function positionValues(r: DeliveryListRow, filter: DeliveryFilter): unknown[] {
  const order = deliveryOrder(filter);
  if (order === 'changed') return [order, r.updated_at, r.id];
  if (order === 'due') return [order, r.next_attempt_at, r.id];
  return [order, r.message_created_at, r.message_id, r.id];
}

/** The position flat values name in the filter's order, or undefined when they are not a position of that order. */
function positionOf(values: unknown[], filter: DeliveryFilter): DeliveryPosition | undefined {
  const [order, ...rest] = values;
  if (order !== deliveryOrder(filter)) return undefined;
  const [a, b, c] = rest;
  // Only values this list could have handed out reach the database (PostgreSQL refuses fractions in bigint and NULs).
  const time = (v: unknown): v is number => Number.isSafeInteger(v);
  const key = (v: unknown): v is string => typeof v === 'string' && CURSOR_KEY.test(v);
  if (order === 'changed' && rest.length === 2 && time(a) && key(b)) return { order, updatedAt: a, id: b };
  if (order === 'due' && rest.length === 2 && time(a) && key(b)) return { order, nextAttemptAt: a, id: b };
  if (order === 'message' && rest.length === 3 && time(a) && key(b) && key(c))
    return { order, messageCreatedAt: a, messageId: b, id: c };
  return undefined;
}

/** Message and delivery ids as this list hands them out (a delivery id is `<message id>.<channel id>`). */
const CURSOR_KEY = /^[A-Za-z0-9_.-]{1,200}$/;

/** A keyset page of the Deliveries list, or why not. */
export type DeliveriesSlice =
  | { ok: true; rows: DeliveryRow[]; next: unknown[] | null }
  | { ok: false; reason: 'bad-position' };

/**
 * The Deliveries list for the API: the same filters and order as the console's pages, paged by keyset. `after` is the
 * `next` of the previous slice (values only; the caller encodes them); one from another filter's order is refused.
 */
export async function deliveriesAfter(
  deps: Deps,
  filter: DeliveryFilter,
  after: unknown[] | undefined,
  limit: number,
): Promise<DeliveriesSlice> {
  const position = after === undefined ? undefined : positionOf(after, filter);
  if (after !== undefined && position === undefined) return { ok: false, reason: 'bad-position' };
  const found = await listDeliveriesAfter(deps.db, filter, position, limit + 1);
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    ok: true,
    rows: page.map(deliveryRow),
    next: found.length > limit && last ? positionValues(last, filter) : null,
  };
}

/** One delivery as a row of the list with every attempt, or undefined. */
export async function deliveryById(
  deps: Deps,
  id: string,
): Promise<(DeliveryRow & { attemptList: AttemptView[] }) | undefined> {
  const row = await findDeliveryRow(deps.db, id);
  if (!row) return undefined;
  const attempts = await attemptsOf(deps.db, [row.id]);
  return { ...deliveryRow(row), attemptList: (attempts.get(row.id) ?? []).map(attemptView) };
}

/**
 * What "re-send all dead letters" of a channel would do: the channel (null once deleted) and how many it would
 * re-queue.
 */
export async function resendAllOffer(deps: Deps, channelId: string): Promise<NonNullable<DeliveriesPage['chosen']>> {
  const channel = await resendChannel(deps.db, channelId);
  if (!channel) return { channel: null, deadLetters: 0 };
  return {
    channel: { id: channel.id, url: channel.url, enabled: channel.enabled === 1 },
    deadLetters: await countResendableDead(deps.db, channelId),
  };
}

/**
 * The channel a (re-sent) delivery is queued for, to name it in the notice after the re-send; undefined when it is
 * gone.
 */
export function channelOfDelivery(
  deps: Deps,
  deliveryId: string,
): Promise<{ id: string | null; url: string | null } | undefined> {
  return deliveryChannel(deps.db, deliveryId);
}

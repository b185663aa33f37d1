// What the pages show about deliveries (SPEC 6.7): per channel on a message with every attempt, and the admin's
// Deliveries list, filtered by state and channel. Who may see what (URLs, errors, excerpts) is decided by the views.
import type { DeliveriesTable } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { attemptsOf, type AttemptRow } from './attempts.repo.ts';
import { findChannelSummary } from '../channels/channels.repo.ts';
import { channelChoices, countDeliveriesOfMessage, deliveryChannel, countResendableDead, deliveriesOfMessage, listDeliveries, type DeliveryFilter } from './deliveries.repo.ts';
import { MAX_ATTEMPTS } from './retry-schedule.ts';

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
  /** The channel (id and URL both null once deleted); name it with channelLabel(), which shows the URL to admins only. */
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

/** The per-channel delivery state of a message, with every attempt's verdict (SPEC 6.7). */
export async function messageDeliveries(deps: Deps, messageId: string, limit = MESSAGE_DELIVERY_ROWS): Promise<MessageDeliveriesView> {
  const [rows, counts] = await Promise.all([deliveriesOfMessage(deps.db, messageId, limit), countDeliveriesOfMessage(deps.db, messageId)]);
  const attempts = await attemptsOf(deps.db, rows.map((r) => r.id));
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
      resendable: (r.state === 'dead' || r.state === 'cancelled') && Number(r.superseded) !== 1 && r.channel_enabled === 1,
      attemptList: (attempts.get(r.id) ?? []).map(attemptView),
    })),
  };
}

/** One row of the admin's Deliveries list. */
export interface DeliveryRow {
  id: string;
  messageId: string;
  headline: string;
  channel: { id: string | null; url: string | null };
  state: DeliveriesTable['state'];
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  nextAttemptAt: number;
  deliveredAt: number | null;
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
  /** With a channel filter: the channel (null once deleted) and how many of its dead letters a re-send would re-queue. */
  chosen?: { channel: { id: string; url: string; enabled: boolean } | null; deadLetters: number };
}

/** One page of deliveries, most recently changed first, filtered by state and channel. */
export async function deliveriesPage(deps: Deps, filter: DeliveryFilter, page: number): Promise<DeliveriesPage> {
  const current = Math.max(1, Math.floor(page) || 1);
  const found = await listDeliveries(deps.db, filter, { offset: (current - 1) * DELIVERIES_PAGE_SIZE, limit: DELIVERIES_PAGE_SIZE + 1 });
  const channels = await channelChoices(deps.db, CHANNEL_CHOICES);
  const chosen = filter.channelId ? await resendAllOffer(deps, filter.channelId) : undefined;
  const rows = found.slice(0, DELIVERIES_PAGE_SIZE).map((r) => ({
    id: r.id,
    messageId: r.message_id,
    headline: r.headline,
    channel: { id: r.channel_id, url: r.channel_url },
    state: r.state,
    attempts: r.attempts,
    maxAttempts: MAX_ATTEMPTS,
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at,
    deliveredAt: r.delivered_at,
    at: r.updated_at,
    superseded: Number(r.superseded) === 1,
    resendable: (r.state === 'dead' || r.state === 'cancelled') && Number(r.superseded) !== 1 && r.channel_enabled === 1,
  }));
  return { filter, page: current, hasNext: found.length > DELIVERIES_PAGE_SIZE, rows, channels, chosen };
}

/** What "re-send all dead letters" of a channel would do: the channel (null once deleted) and how many it would re-queue. */
export async function resendAllOffer(deps: Deps, channelId: string): Promise<NonNullable<DeliveriesPage['chosen']>> {
  const channel = await findChannelSummary(deps.db, channelId);
  if (!channel) return { channel: null, deadLetters: 0 };
  return { channel: { id: channel.id, url: channel.url, enabled: channel.enabled === 1 }, deadLetters: await countResendableDead(deps.db, channelId) };
}

/** The channel a (re-sent) delivery is queued for, to name it in the notice after the re-send; undefined when it is gone. */
export function channelOfDelivery(deps: Deps, deliveryId: string): Promise<{ id: string | null; url: string | null } | undefined> {
  return deliveryChannel(deps.db, deliveryId);
}

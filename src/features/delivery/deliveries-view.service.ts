// What the pages show about deliveries (SPEC 6.7): per channel on a message with every attempt, and the admin's
// list of undelivered deliveries. Who may see what (URLs, errors, excerpts) is decided by the views.
import type { DeliveriesTable } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { attemptsOf, type AttemptRow } from './attempts.repo.ts';
import { countDeliveriesOfMessage, deliveriesOfMessage, undeliveredLatest } from './deliveries.repo.ts';
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

/** One row of the admin's dead letters list. */
export interface UndeliveredRow {
  id: string;
  messageId: string;
  headline: string;
  channel: { id: string | null; url: string | null };
  state: 'dead' | 'cancelled';
  attempts: number;
  lastError: string | null;
  at: number;
  resendable: boolean;
}

/** Undelivered deliveries (dead-lettered or cancelled) that no re-send replaced, newest first, for the admin list. */
export async function undeliveredDeliveries(deps: Deps, limit = 100): Promise<UndeliveredRow[]> {
  const rows = await undeliveredLatest(deps.db, limit);
  return rows.map((r) => ({
    id: r.id,
    messageId: r.message_id,
    headline: r.headline,
    channel: { id: r.channel_id, url: r.channel_url },
    state: r.state as 'dead' | 'cancelled',
    attempts: r.attempts,
    lastError: r.last_error,
    at: r.updated_at,
    resendable: r.channel_enabled === 1,
  }));
}

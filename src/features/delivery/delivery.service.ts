// Delivery domain: recording an attempt's verdict, the admin re-send, and what a message shows about its deliveries.
import type { DeliveriesTable } from '../../db/schema.ts';
import { newId, type Deps } from '../../deps.ts';
import type { PostOutcome } from '../../net/outbound.ts';
import {
  attemptsOf,
  channelEnabled,
  countDeliveriesOfMessage,
  deliveriesOfMessage,
  findDeliveryForUpdate,
  finishDelivery,
  insertAttempt,
  insertDelivery,
  laterSeriesExists,
  markChannelFailure,
  markChannelSuccess,
  undeliveredLatest,
  type AttemptJob,
} from './delivery.repo.ts';
import { afterFailure, MAX_ATTEMPTS } from './retry-schedule.ts';

/** A finished attempt (delivered or failed; an attempt aborted by shutdown is never recorded). */
export type Verdict = Exclude<PostOutcome, { kind: 'aborted' }>;

/**
 * Records an attempt in one transaction: the attempt row, the delivery's new state (delivered, next attempt, or
 * dead-lettered after the fifth failure) and the channel's counters. Nothing is written when this worker no longer
 * holds the lease (another worker took the delivery over); returns whether it was recorded.
 * Delivery failures are data on these rows, never a message and never a log line.
 */
export async function recordAttempt(deps: Deps, job: AttemptJob, owner: string, verdict: Verdict, startedAt: number): Promise<boolean> {
  const finishedAt = deps.clock.now();
  const attemptNo = job.attempts + 1;
  const delivered = verdict.kind === 'delivered';
  const error = verdict.kind === 'failed' ? verdict.error : null;
  const next = delivered ? undefined : afterFailure(attemptNo, finishedAt, deps.random);
  return deps.db.transaction().execute(async (trx) => {
    const held = await finishDelivery(trx, job.id, owner, {
      state: delivered ? 'delivered' : next!.state,
      attempts: attemptNo,
      next_attempt_at: next?.state === 'pending' ? next.nextAttemptAt : finishedAt,
      delivered_at: delivered ? finishedAt : null,
      last_error: error,
      updated_at: finishedAt,
    });
    if (!held) return false;
    await insertAttempt(trx, {
      id: newId(deps.random),
      delivery_id: job.id,
      attempt_no: attemptNo,
      started_at: startedAt,
      finished_at: finishedAt,
      verdict: delivered ? 'delivered' : 'failed',
      status_code: verdict.status,
      error,
    });
    if (delivered) await markChannelSuccess(trx, job.channel_id, finishedAt);
    else await markChannelFailure(trx, job.channel_id, error!, finishedAt);
    return true;
  });
}

/** Why a re-send was refused. */
export type ResendRefusal = 'not-found' | 'not-undelivered' | 'already-resent' | 'channel-deleted' | 'channel-disabled';

/**
 * Re-sends a dead-lettered (or cancelled) delivery: a new pending delivery of the same message (same stored body,
 * same message id) to the same channel, with a fresh budget of attempts, due now. The old row stays as history.
 */
export async function resendDelivery(deps: Deps, deliveryId: string): Promise<{ ok: true; deliveryId: string } | { ok: false; reason: ResendRefusal }> {
  return deps.db.transaction().execute(async (trx) => {
    const old = await findDeliveryForUpdate(trx, deps.dialect, deliveryId);
    if (!old) return { ok: false, reason: 'not-found' } as const;
    if (old.state !== 'dead' && old.state !== 'cancelled') return { ok: false, reason: 'not-undelivered' } as const;
    if (old.channel_id === null) return { ok: false, reason: 'channel-deleted' } as const;
    const enabled = await channelEnabled(trx, old.channel_id);
    if (enabled === undefined) return { ok: false, reason: 'channel-deleted' } as const;
    if (enabled !== 1) return { ok: false, reason: 'channel-disabled' } as const;
    if (await laterSeriesExists(trx, old)) return { ok: false, reason: 'already-resent' } as const;
    // Strictly later than the series it replaces, so "latest series" is well defined even within one millisecond.
    const now = Math.max(deps.clock.now(), old.created_at + 1);
    const id = newId(deps.random);
    await insertDelivery(trx, {
      id,
      message_id: old.message_id,
      channel_id: old.channel_id,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_owner: null,
      lease_until: null,
      delivered_at: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    });
    return { ok: true, deliveryId: id } as const;
  });
}

/** One attempt as the message page shows it. */
export interface AttemptView {
  attemptNo: number;
  startedAt: number;
  verdict: 'delivered' | 'failed';
  statusCode: number | null;
  error: string | null;
}

/** One delivery series of a message to a channel, as the message page shows it. */
export interface DeliveryView {
  id: string;
  /** Host of the channel (never its path or query, which can carry a credential); null once deleted. */
  channelHost: string | null;
  /** A short, stable tag telling apart channels on the same host. */
  channelTag: string | null;
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

/** The per-channel delivery state of a message, with every attempt's verdict (SPEC 6.7). */
export async function messageDeliveries(deps: Deps, messageId: string, limit = MESSAGE_DELIVERY_ROWS): Promise<MessageDeliveriesView> {
  const [rows, counts] = await Promise.all([deliveriesOfMessage(deps.db, messageId, limit), countDeliveriesOfMessage(deps.db, messageId)]);
  const attempts = await attemptsOf(deps.db, rows.map((r) => r.id));
  return {
    counts,
    rows: rows.map((r) => ({
      id: r.id,
      channelHost: r.channel_url ? hostOf(r.channel_url) : null,
      channelTag: r.channel_id ? r.channel_id.slice(0, 6) : null,
      state: r.state,
      attempts: r.attempts,
      maxAttempts: MAX_ATTEMPTS,
      nextAttemptAt: r.state === 'pending' ? r.next_attempt_at : null,
      deliveredAt: r.delivered_at,
      lastError: r.last_error,
      superseded: Number(r.superseded) === 1,
      resendable: (r.state === 'dead' || r.state === 'cancelled') && Number(r.superseded) !== 1 && r.channel_enabled === 1,
      attemptList: attempts
        .filter((a) => a.delivery_id === r.id)
        .map((a) => ({ attemptNo: a.attempt_no, startedAt: a.started_at, verdict: a.verdict, statusCode: a.status_code, error: a.error })),
    })),
  };
}

/** One row of the admin's dead letters list. */
export interface UndeliveredRow {
  id: string;
  messageId: string;
  headline: string;
  channelHost: string | null;
  channelTag: string | null;
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
    channelHost: r.channel_url ? hostOf(r.channel_url) : null,
    channelTag: r.channel_id ? r.channel_id.slice(0, 6) : null,
    state: r.state as 'dead' | 'cancelled',
    attempts: r.attempts,
    lastError: r.last_error,
    at: r.updated_at,
    resendable: r.channel_enabled === 1,
  }));
}

/** The host (and port) of a channel URL, for display. */
export function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : 'unknown';
}

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
  insertAttempts,
  insertDelivery,
  laterSeriesExists,
  markChannelFailure,
  markChannelsSucceeded,
  markDelivered,
  resetChannelThenFail,
  undeliveredLatest,
  type AttemptJob,
} from './delivery.repo.ts';
import { afterFailure, MAX_ATTEMPTS } from './retry-schedule.ts';

/** A finished attempt (delivered or failed; an attempt aborted by shutdown is never recorded). */
export type Verdict = Exclude<PostOutcome, { kind: 'aborted' }>;

/** One finished attempt waiting to be recorded. */
export interface FinishedAttempt {
  job: AttemptJob;
  verdict: Verdict;
  startedAt: number;
}

/**
 * Records finished attempts in one transaction (the worker's group commit): each attempt row, each delivery's new
 * state (delivered, next attempt, or dead-lettered after the fifth failure) and each channel's counters.
 * A delivery this worker no longer holds the lease of (another worker took it over) is skipped entirely.
 * Returns how many were recorded. Delivery failures are data on these rows, never a message and never a log line.
 */
export async function recordAttempts(deps: Deps, owner: string, items: FinishedAttempt[]): Promise<number> {
  if (items.length === 0) return 0;
  const finishedAt = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const held = await markDelivered(trx, items.filter((i) => i.verdict.kind === 'delivered').map((i) => i.job.id), owner, finishedAt);
    for (const item of items) {
      if (item.verdict.kind !== 'failed') continue;
      const attemptNo = item.job.attempts + 1;
      const next = afterFailure(attemptNo, finishedAt, deps.random);
      const ok = await finishDelivery(trx, item.job.id, owner, {
        state: next.state,
        attempts: attemptNo,
        next_attempt_at: next.state === 'pending' ? next.nextAttemptAt : finishedAt,
        delivered_at: null,
        last_error: item.verdict.error,
        updated_at: finishedAt,
      });
      if (ok) held.add(item.job.id);
    }
    const recorded = items.filter((i) => held.has(i.job.id));
    await insertAttempts(
      trx,
      recorded.map(({ job, verdict, startedAt }) => ({
        id: newId(deps.random),
        delivery_id: job.id,
        attempt_no: job.attempts + 1,
        started_at: startedAt,
        finished_at: finishedAt,
        verdict: verdict.kind,
        status_code: verdict.status,
        error: verdict.kind === 'failed' ? verdict.error : null,
      })),
    );
    // Per channel, in order: a success resets the streak, each failure after it extends it.
    const channels = new Map<string, { succeeded: boolean; failures: number; lastError: string | null }>();
    for (const { job, verdict } of recorded) {
      const c = channels.get(job.channel_id) ?? { succeeded: false, failures: 0, lastError: null };
      if (verdict.kind === 'delivered') Object.assign(c, { succeeded: true, failures: 0 });
      else Object.assign(c, { failures: c.failures + 1, lastError: verdict.error });
      channels.set(job.channel_id, c);
    }
    await markChannelsSucceeded(trx, [...channels].filter(([, c]) => c.succeeded && c.failures === 0).map(([id]) => id), finishedAt);
    for (const [channelId, c] of channels) {
      if (c.succeeded && c.failures > 0) await resetChannelThenFail(trx, channelId, c.failures, c.lastError!, finishedAt);
      else if (!c.succeeded) await markChannelFailure(trx, channelId, c.lastError!, finishedAt, c.failures);
    }
    return recorded.length;
  });
}

/** Records one finished attempt; returns whether this worker still held its lease. */
export async function recordAttempt(deps: Deps, job: AttemptJob, owner: string, verdict: Verdict, startedAt: number): Promise<boolean> {
  return (await recordAttempts(deps, owner, [{ job, verdict, startedAt }])) === 1;
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

// Delivery domain: recording an attempt's verdict, the admin re-send, and what a message shows about its deliveries.
import type { Kysely } from 'kysely';
import type { DB, DeliveriesTable } from '../../db/schema.ts';
import { newId, type Deps } from '../../deps.ts';
import type { PostOutcome } from '../../net/outbound.ts';
import {
  attemptLog,
  channelEnabled,
  countDeliveriesOfMessage,
  deliveriesOfMessage,
  claimJobsIn,
  closeDeliveries,
  findDeliveryForUpdate,
  insertDelivery,
  laterSeriesExists,
  recordAndClaimPg,
  undeliveredLatest,
  updateChannelTallies,
  type AttemptJob,
  type AttemptRecord,
  type ChannelTally,
  type ClaimParams,
  type RecordAndClaimResult,
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
 * Records finished attempts (the worker's group commit), atomically: each delivery's new state and attempt log entry
 * (delivered, next attempt, or dead-lettered after the fifth failure) and each channel's counters, with set-based
 * statements whose cost hardly grows with the batch (PostgreSQL: one statement; SQLite: three in one transaction).
 * A delivery this worker no longer holds the lease of (another worker took it over) is skipped entirely.
 * Returns how many were recorded. Delivery failures are data on these rows, never a message and never a log line.
 */
export async function recordAttempts(deps: Deps, owner: string, items: FinishedAttempt[]): Promise<number> {
  return (await recordAndClaim(deps, owner, items)).recorded;
}

/**
 * Records finished attempts as recordAttempts does and, with `claim`, leases the next due deliveries in the same
 * transaction (PostgreSQL: the same statement): one commit and, on PostgreSQL, one round trip for both. The worker
 * sends the records through its DeliveryStore (its own session or thread) instead; this runs them on `deps.db`.
 */
export async function recordAndClaim(deps: Deps, owner: string, items: FinishedAttempt[], claim?: ClaimParams): Promise<RecordAndClaimResult> {
  const finishedAt = deps.clock.now();
  const records = attemptRecords(items, finishedAt, deps.random);
  if (deps.dialect === 'postgres') return recordAndClaimPg(deps.db, records, owner, finishedAt, claim);
  return recordAndClaimSqlite(deps.db, records, owner, finishedAt, claim);
}

/** Each finished attempt as the recording statements take it: its attempt log entry and its delivery's next state. */
export function attemptRecords(items: FinishedAttempt[], finishedAt: number, random: Deps['random']): AttemptRecord[] {
  return items.map(({ job, verdict, startedAt }, n) => {
    const attemptNo = job.attempts + 1;
    const next = verdict.kind === 'failed' ? afterFailure(attemptNo, finishedAt, random) : undefined;
    return {
      n,
      id: job.id,
      channel_id: job.channel_id,
      attempt_no: attemptNo,
      verdict: verdict.kind,
      state: next ? next.state : 'delivered',
      next_attempt_at: next ? (next.state === 'pending' ? next.nextAttemptAt : finishedAt) : null,
      started_at: startedAt,
      status_code: verdict.status,
      error: verdict.kind === 'failed' ? verdict.error : null,
    };
  });
}

/**
 * SQLite: records a batch (only deliveries `owner` still holds) and, with `claim`, leases the next due deliveries, in
 * one immediate transaction. `db` is any connection to the file (the worker's store thread has its own).
 */
export async function recordAndClaimSqlite(db: Kysely<DB>, records: AttemptRecord[], owner: string, finishedAt: number, claim?: ClaimParams): Promise<RecordAndClaimResult> {
  if (records.length === 0 && !claim) return { recorded: 0, jobs: [] };
  return db.transaction().execute(async (trx) => {
    let recorded = 0;
    if (records.length > 0) {
      const held = await closeDeliveries(trx, records, owner, finishedAt);
      const kept = records.filter((r) => held.has(r.id));
      await updateChannelTallies(trx, channelTallies(kept), finishedAt);
      recorded = kept.length;
    }
    return { recorded, jobs: claim ? await claimJobsIn(trx, claim) : [] };
  });
}

/** Per channel, in batch order: a success resets the streak, each failure after it extends it. */
export function channelTallies(records: AttemptRecord[]): ChannelTally[] {
  const channels = new Map<string, ChannelTally>();
  for (const r of records) {
    const c = channels.get(r.channel_id) ?? { id: r.channel_id, succeeded: 0, failures: 0, error: null };
    if (r.verdict === 'delivered') Object.assign(c, { succeeded: 1, failures: 0 });
    else Object.assign(c, { failures: c.failures + 1, error: r.error });
    channels.set(r.channel_id, c);
  }
  return [...channels.values()];
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
      attemptList: attemptLog(r).map((a) => ({ attemptNo: a.attempt_no, startedAt: a.started_at, verdict: a.verdict, statusCode: a.status_code, error: a.error })),
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

// Delivery domain rules of the worker's two database stages: which due deliveries a worker claims (oldest first, at
// most its free slots, at most `perChannel` in flight per channel) and what an attempt's verdict changes (the
// delivery's state by the retry schedule, the attempt row, the channel's failure streak).
import type { Deps } from '../../deps.ts';
import type { PostOutcome } from '../../net/outbound.ts';
import { leaseDue, releaseLeases, type AttemptJob } from './claim.repo.ts';
import { recordIn, recordInOneStatement, type AttemptRecord, type DeliveryAfterAttempt } from './record.repo.ts';
import { afterFailure } from './retry-schedule.ts';

/** A finished attempt (delivered or failed; an attempt aborted by shutdown is never recorded). */
export type Verdict = Exclude<PostOutcome, { kind: 'aborted' }>;

/** What one claim may take. */
export interface ClaimLimits {
  /** The worker's free slots: at most this many deliveries. */
  slots: number;
  /** At most this many attempts in flight to one channel in this worker. */
  perChannel: number;
  /** The worker's attempts in flight, per channel id. */
  busy: ReadonlyMap<string, number>;
  /** How long the lease holds (ms); a worker that dies frees its deliveries when it runs out. */
  leaseMs: number;
}

/**
 * Claims due deliveries for `owner`: leases the oldest due ones of enabled channels, at most `slots`, skipping channels
 * already at the cap in this worker, for `leaseMs`; then applies the cap oldest first and gives back at once what is
 * over it. With a backlog on few channels that is most of what it leased (one write more per row; measured faster
 * than the locked read and separate lease it replaced). Returns what the kept attempts need, oldest first. Each leased
 * channel had room for at least its oldest row, so an empty result means nothing this worker may take is due.
 */
export async function claimDue(deps: Deps, owner: string, limits: ClaimLimits): Promise<AttemptJob[]> {
  if (limits.slots <= 0) return [];
  const now = deps.clock.now();
  const exclude = [...limits.busy].filter(([, n]) => n >= limits.perChannel).map(([channel]) => channel);
  const leased = await leaseDue(deps.db, deps.dialect, {
    now,
    exclude,
    limit: limits.slots,
    owner,
    leaseUntil: now + limits.leaseMs,
  });
  const chosen = withinCaps(leased, limits);
  if (chosen.length < leased.length) {
    const kept = new Set(chosen);
    const over = leased.filter((j) => !kept.has(j)).map((j) => j.id);
    try {
      await releaseLeases(deps.db, over, owner);
    } catch (err) {
      // The kept ones are leased and are attempted now; these wait for their lease to run out (at-least-once holds).
      deps.log.error(
        { err, worker: owner, deliveries: over.length },
        'delivery worker could not give back deliveries over the per-channel cap',
      );
    }
  }
  return chosen;
}

/** The per-channel cap, oldest first: the leased deliveries (at most `slots` already) whose channel still has room. */
function withinCaps(leased: AttemptJob[], limits: ClaimLimits): AttemptJob[] {
  const taken = new Map(limits.busy);
  const chosen: AttemptJob[] = [];
  for (const c of leased) {
    const n = taken.get(c.channel_id) ?? 0;
    if (n >= limits.perChannel) continue;
    taken.set(c.channel_id, n + 1);
    chosen.push(c);
  }
  return chosen;
}

/**
 * Records one attempt's verdict atomically (SQLite: one immediate transaction; PostgreSQL: one statement, see
 * record.repo.ts): the delivery's new state (delivered; pending until its retry time;
 * dead after the last attempt), the attempt row, and the channel's failure streak (a success ends it, a failure
 * extends it). Nothing is written when `owner` no longer holds the lease (another worker took the delivery over).
 * Returns whether it recorded. Delivery failures are data on these rows, never a message and never a log line.
 */
export async function recordVerdict(
  deps: Deps,
  owner: string,
  job: AttemptJob,
  verdict: Verdict,
  startedAt: number,
  durationMs: number,
): Promise<boolean> {
  const now = deps.clock.now();
  const attemptNo = job.attempts + 1;
  const record: AttemptRecord = {
    id: job.id,
    owner,
    attemptsBefore: job.attempts,
    after: deliveryAfter(verdict, attemptNo, now, deps),
    attempt: {
      delivery_id: job.id,
      attempt_no: attemptNo,
      started_at: startedAt,
      duration_ms: Math.max(0, Math.round(durationMs)),
      verdict: verdict.kind,
      status_code: verdict.status,
      error: verdict.kind === 'failed' ? verdict.error : null,
      response_excerpt: verdict.excerpt ?? null,
    },
    channelId: job.channel_id,
    channel: channelAfter(verdict, now),
  };
  deps.metrics?.deliveryAttempt(verdict.kind, verdict.status, attemptNo === 1 ? startedAt - job.created_at : undefined);
  if (deps.dialect === 'postgres') return recordInOneStatement(deps.db, record);
  return deps.db.transaction().execute((trx) => recordIn(trx, record));
}

/** The channel's counters after a verdict: a success ends the failure streak, a failure extends it by one. */
function channelAfter(verdict: Verdict, now: number): AttemptRecord['channel'] {
  if (verdict.kind === 'delivered') return { consecutive_failures: 0, last_success_at: now, failing_since: null };
  // Added in the database, so concurrent workers' failures add up; the streak's start is kept once set.
  return {
    consecutive_failures: (eb) => eb('consecutive_failures', '+', 1),
    last_error: verdict.error,
    last_error_at: now,
    failing_since: (eb) => eb.fn.coalesce('failing_since', eb.val(now)),
  };
}

/**
 * The delivery's row after attempt `attemptNo` ended at `now` with `verdict`, by the retry schedule: a delivered row
 * keeps its last due time; a failed one gets its next (dead-lettered: the time it died).
 */
function deliveryAfter(verdict: Verdict, attemptNo: number, now: number, deps: Deps): DeliveryAfterAttempt {
  const base = { attempts: attemptNo, updated_at: now };
  if (verdict.kind === 'delivered') return { ...base, state: 'delivered', delivered_at: now, last_error: null };
  const next = afterFailure(attemptNo, now, deps.random);
  return {
    ...base,
    state: next.state,
    next_attempt_at: next.state === 'pending' ? next.nextAttemptAt : now,
    delivered_at: null,
    last_error: verdict.error,
  };
}

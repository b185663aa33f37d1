// The delivery loop: claim due deliveries with a lease, POST each through the guarded client, record the verdict.
// Bounded concurrency overall and per channel, so a dead or slow channel holds at most its own few slots
// and never delays other channels, emission or the web tier (SPEC 6.4).
import { setMaxListeners } from 'node:events';
import { newId, type Deps } from '../../deps.ts';
import { createOutboundClient, type OutboundOptions } from '../../net/outbound.ts';
import { cancelUndeliverable, releaseLeases, type AttemptJob, type ClaimParams } from './delivery.repo.ts';
import { attemptRecords, type FinishedAttempt } from './delivery.service.ts';
import { openDeliveryStore } from './delivery.store.ts';
import { deliveryHeaders } from './signature.ts';

/** Tuning of one worker; defaults suit one process. Tests inject the outbound resolver, policy, CA and timeout. */
export interface WorkerOptions {
  /** Written into lease_owner; random per worker by default. */
  id?: string;
  /** Attempts in flight at once in this worker. */
  concurrency?: number;
  /** Attempts in flight at once to one channel in this worker. */
  perChannel?: number;
  /** How often an idle worker looks for due deliveries (ms). */
  idlePollMs?: number;
  /** How long a claim holds a delivery; a worker that dies frees it when this runs out (ms). */
  leaseMs?: number;
  /** Guarded-client options; production uses the defaults. */
  outbound?: OutboundOptions;
  /** SQLite file: record and claim on a thread of the worker's own (the default), or on deps.db in this thread. */
  storeThread?: boolean;
}

/** A running (or runnable) worker. */
export interface DeliveryWorker {
  /** Runs the loop in the background until stop(). */
  start(): void;
  /** Runs until nothing is due and nothing is in flight (tests move the clock and drain; never sleep). */
  drain(): Promise<void>;
  /** Stops claiming, lets in-flight attempts finish for up to `graceMs`, then aborts the rest and frees their leases. */
  stop(graceMs?: number): Promise<void>;
  /** Wakes an idle loop now (for a process that has just emitted). */
  wake(): void;
  /** This worker's lease owner id. */
  readonly id: string;
  /** Attempts this worker has recorded so far (for operators' status lines and tests). */
  readonly recorded: number;
}

/** Attempts in flight per worker: receivers are waited on, not computed for, so this is mostly idle sockets. */
export const DEFAULT_CONCURRENCY = 32;
/** Attempts in flight to one channel per worker: a dead channel holds at most this many slots. */
export const DEFAULT_PER_CHANNEL = 4;
/** Idle poll interval: bounds how long a fresh message waits before its first attempt starts. */
export const DEFAULT_IDLE_POLL_MS = 50;
/** Comfortably above one attempt's 10 s budget plus recording, so a live worker never loses its lease. */
export const DEFAULT_LEASE_MS = 60_000;
/** How often deliveries of disabled or deleted channels are swept to `cancelled` (ms of the deps clock). */
const SWEEP_EVERY_MS = 5_000;
/** How long the loop waits after a database failure before trying again. */

const ERROR_BACKOFF_MS = 1_000;
/** Most verdicts recorded in one transaction. */
const MAX_BATCH = 500;
/** Verdicts waiting for their group commit, per slot, beyond which the worker claims nothing more until they are recorded. */
const UNRECORDED_PER_SLOT = 8;
/**
 * How long a delivery claimed ahead may wait in the local queue for a free slot (ms of the deps clock). Older ones are
 * given back unsent, so a queued attempt starts well inside its lease and at most this long after the claim checked
 * that its channel is enabled.
 */
export const QUEUE_TTL_MS = 1_000;
/**
 * A channel may hold up to this many times its per-channel bound in leases (the rest queued) while it answers fast
 * enough to use them (see channelRoom); a worker, this many times its concurrency. A deep queue per channel keeps every
 * slot busy between claims: with the slots split evenly between channels, a channel whose queue runs dry idles its own.
 */
const AHEAD_FACTOR = 8;
/** Attempts of a channel that finished within this long (ms) bound how many of its deliveries are claimed ahead. */
const PACE_WINDOW_MS = QUEUE_TTL_MS / 4;
/**
 * While at least `concurrency` deliveries are queued, a cycle starts at most this long (ms) after the previous one.
 * Part of a cycle's cost is fixed (PostgreSQL: about 0.36 ms of the server's CPU per statement; SQLite: the hand-off to
 * the store thread), so fewer, larger cycles cost less per delivery; the queue keeps the slots busy meanwhile.
 */
const CYCLE_SPACING_MS = 10;
/**
 * A claim considers this many times as many of the oldest due rows as it may lease. Rows of saturated channels are
 * excluded in the query, so every candidate's channel has room and a claim leases at least one row whenever one is
 * due; rows beyond a channel's quota are skipped, and the loop claims again while there is room.
 */
const CLAIM_WINDOW_FACTOR = 2;

/** Creates a worker over `deps`. */
export function createDeliveryWorker(deps: Deps, options: WorkerOptions = {}): DeliveryWorker {
  const id = options.id ?? `w-${newId(deps.random).slice(0, 12)}`;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const perChannel = options.perChannel ?? DEFAULT_PER_CHANNEL;
  const idlePollMs = options.idlePollMs ?? DEFAULT_IDLE_POLL_MS;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const queueTtl = Math.min(QUEUE_TTL_MS, leaseMs / 4);
  const client = createOutboundClient(options.outbound);
  // Recording and claiming go through a connection of the worker's own: a PostgreSQL session with the claim's
  // settings, or a SQLite connection on a thread of its own (see delivery.store.ts).
  const store = openDeliveryStore(deps, { thread: options.storeThread });
  // Requests in flight (the concurrency bounds count these), and verdicts not yet recorded: a slot is free again as
  // soon as its request has finished, so the next attempt does not wait for the previous one's bookkeeping. The lease
  // is held until the verdict is recorded, so nobody else makes that attempt again meanwhile.
  const inflight = new Set<Promise<void>>();
  let unrecorded = 0;
  // drain() and stop() waiting for every verdict to be recorded.
  const recordedWaiters: (() => void)[] = [];
  const inflightPerChannel = new Map<string, number>();
  // Claimed ahead (leased to this worker) while requests are in flight, so a freed slot starts its next attempt at
  // once instead of waiting for a claim. A channel holds at most `perChannel` leases plus as many as it finished
  // attempts lately (see aheadOf): a channel that never answers is never claimed ahead, and a slow one hardly.
  const queue: { job: AttemptJob; claimedAt: number }[] = [];
  const queuedPerChannel = new Map<string, number>();
  // Per channel, attempts finished in the current and in the previous pace window.
  const pace = new Map<string, { start: number; current: number; previous: number }>();
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one listener per attempt in flight
  let lastSweep = -Infinity;
  let running: Promise<void> | undefined;
  let stopping = false;
  let wakeUp: (() => void) | undefined;
  let recorded = 0;
  // Group commit: finished attempts queue here and are recorded together, one transaction per batch.
  const toRecord: FinishedAttempt[] = [];
  let flushing: Promise<void> | undefined;
  // Queued deliveries that waited too long: their leases are given back together. The whole queue was last checked
  // for them at lastAgeCheck (ms of the deps clock; see pump).
  let toRelease: string[] = [];
  let lastAgeCheck = -Infinity;
  let releasing: Promise<void> | undefined;
  // Whether the last claim excluded no channel and limited none (this worker held no lease when it started): only such
  // a claim coming back empty shows that nothing is due. One that excluded busy channels may come back empty while
  // their attempts finish meanwhile and their due rows wait (the cause of drain() stopping early on PostgreSQL).
  let lastClaimUnconstrained = false;

  const wake = () => {
    const w = wakeUp;
    wakeUp = undefined;
    w?.();
  };
  const count = (m: Map<string, number>, key: string, by: number) => {
    const n = (m.get(key) ?? 0) + by;
    if (n <= 0) m.delete(key);
    else m.set(key, n);
  };

  /**
   * How many of `channel`'s deliveries may wait in the queue beyond its slots: as many attempts as it finished in the
   * current or the previous pace window, so its queue holds about one window of its pace (well inside the queue TTL),
   * at most (AHEAD_FACTOR - 1) x perChannel.
   */
  function aheadOf(channel: string, now: number): number {
    const p = pace.get(channel);
    if (!p || now - p.start >= 2 * PACE_WINDOW_MS || now < p.start) return 0;
    const lately = now - p.start < PACE_WINDOW_MS ? Math.max(p.current, p.previous) : p.current;
    return Math.min((AHEAD_FACTOR - 1) * perChannel, lately);
  }

  /** Counts a finished attempt of `channel` towards its pace. */
  function countFinished(channel: string, now: number): void {
    let p = pace.get(channel);
    if (!p || now - p.start >= 2 * PACE_WINDOW_MS || now < p.start) p = { start: now, current: 0, previous: 0 };
    else if (now - p.start >= PACE_WINDOW_MS) p = { start: now, current: 0, previous: p.current };
    p.current++;
    pace.set(channel, p);
  }

  /** Leases this worker may still take for `channel`. */
  function channelRoom(channel: string, now: number): number {
    return perChannel + aheadOf(channel, now) - (inflightPerChannel.get(channel) ?? 0) - (queuedPerChannel.get(channel) ?? 0);
  }

  /** How many more deliveries a claim may lease: room for every slot, plus as many again queued ahead. */
  function claimRoom(): number {
    if (stopping || unrecorded >= concurrency * UNRECORDED_PER_SLOT) return 0;
    return AHEAD_FACTOR * concurrency - inflight.size - queue.length;
  }

  /**
   * One database cycle: records the verdicts waiting for their group commit and claims as many due deliveries as there
   * is room for, in one transaction (PostgreSQL: one statement), queues them and starts what fits; returns how many it
   * claimed. Unless `eager`, it claims only once a quarter of the room is free, so claims come in batches rather than
   * one per finished attempt. Cycles run one at a time (the only claimer), so each claim's quotas count every lease.
   */
  function cycle(eager: boolean): Promise<number> {
    const run = cycling.then(async () => {
      // Under load, fewer and larger cycles (see CYCLE_SPACING_MS); the queued deliveries keep every slot busy meanwhile.
      const wait = lastCycleAt + CYCLE_SPACING_MS - performance.now();
      if (wait > 0 && !eager && !stopping && queue.length >= concurrency) await new Promise((resolve) => setTimeout(resolve, wait));
      lastCycleAt = performance.now();
      return cycleNow(eager);
    });
    cycling = run.catch(() => 0);
    return run;
  }
  let cycling: Promise<number> = Promise.resolve(0);
  let lastCycleAt = -Infinity;

  async function cycleNow(eager: boolean): Promise<number> {
    const batch = toRecord.splice(0, MAX_BATCH);
    const claim = claimParams(eager, batch.length);
    lastClaimUnconstrained = false;
    if (batch.length === 0 && !claim) return 0;
    let jobs: AttemptJob[];
    try {
      const finishedAt = deps.clock.now();
      const result = await store.recordAndClaim(attemptRecords(batch, finishedAt, deps.random), id, finishedAt, claim?.params);
      recorded += result.recorded;
      jobs = result.jobs;
    } catch (err) {
      // The database, not the receiver, failed: the leases run out and the attempts are made again.
      if (batch.length > 0) deps.log.error({ err, worker: id }, 'delivery worker could not record attempts');
      throw err;
    } finally {
      // Recorded, or (the cycle failed) left to their leases, which run out: either way no longer waiting.
      if (batch.length > 0) {
        unrecorded -= batch.length;
        if (unrecorded === 0) for (const resolve of recordedWaiters.splice(0)) resolve();
        wake();
      }
    }
    if (!claim) return 0;
    lastClaimUnconstrained = claim.unconstrained;
    // The queue TTL counts from before the claim ran, as the lease does, so a claim that took long eats into it.
    const claimedAt = claim.params.now;
    for (const job of jobs) {
      queue.push({ job, claimedAt });
      count(queuedPerChannel, job.channel_id, 1);
    }
    pump();
    return jobs.length;
  }

  /** What the next claim may take (nothing while stopping or too many verdicts wait), or undefined for no claim. */
  function claimParams(eager: boolean, recording: number): { params: ClaimParams; unconstrained: boolean } | undefined {
    if (stopping || unrecorded - recording >= concurrency * UNRECORDED_PER_SLOT) return undefined;
    const room = AHEAD_FACTOR * concurrency - inflight.size - queue.length;
    if (room <= 0) return undefined;
    if (!eager && inflight.size + queue.length > 0 && room < Math.max(1, Math.floor(concurrency / 4))) return undefined;
    const now = deps.clock.now();
    const exclude: string[] = [];
    const quotas = new Map<string, number>();
    // Channels without an entry here get `perChannel` (the room of a channel this worker holds nothing of, idle lately).
    for (const channel of new Set([...inflightPerChannel.keys(), ...queuedPerChannel.keys(), ...pace.keys()])) {
      const n = channelRoom(channel, now);
      if (n <= 0) exclude.push(channel);
      else if (n !== perChannel) quotas.set(channel, n);
    }
    return {
      // Every candidate's channel has room (saturated ones are excluded), so the window always yields work when there is any.
      params: { owner: id, now, leaseUntil: now + leaseMs, limit: room, perChannel, exclude, quotas, window: CLAIM_WINDOW_FACTOR * room },
      unconstrained: inflight.size === 0 && queue.length === 0,
    };
  }

  /** The loop's and drain()'s step: sweeps disabled channels' deliveries now and then, then runs a cycle. */
  async function tick(eager = true): Promise<number> {
    const now = deps.clock.now();
    if (now - lastSweep >= SWEEP_EVERY_MS || now < lastSweep) {
      await cancelUndeliverable(deps.db, now);
      lastSweep = now;
    }
    return cycle(eager);
  }

  /**
   * Starts queued attempts, oldest claim first, while there are free slots and their channel has room, and gives back
   * those that waited longer than the queue TTL. Each one is checked before it starts; the whole queue is checked for age
   * at least every tenth of the TTL, and in between the scan stops once every slot is busy (it runs after every attempt).
   */
  function pump(): void {
    if (queue.length === 0) return;
    const now = deps.clock.now();
    const checkAll = stopping || now - lastAgeCheck >= queueTtl / 10 || now < lastAgeCheck;
    if (checkAll) lastAgeCheck = now;
    let kept = 0;
    let i = 0;
    for (; i < queue.length; i++) {
      if (!checkAll && inflight.size >= concurrency) break;
      const item = queue[i]!;
      const channel = item.job.channel_id;
      if (stopping || now - item.claimedAt > queueTtl || now < item.claimedAt) {
        count(queuedPerChannel, channel, -1);
        toRelease.push(item.job.id);
        continue;
      }
      if (inflight.size < concurrency && (inflightPerChannel.get(channel) ?? 0) < perChannel) {
        count(queuedPerChannel, channel, -1);
        launch(item.job);
        continue;
      }
      queue[kept++] = item;
    }
    if (kept < i) {
      while (i < queue.length) queue[kept++] = queue[i++]!;
      queue.length = kept;
    }
    if (toRelease.length > 0) releasing ??= releaseQueued();
  }

  async function releaseQueued(): Promise<void> {
    while (toRelease.length > 0) {
      const ids = toRelease;
      toRelease = [];
      try {
        await releaseLeases(deps.db, ids, id);
      } catch (err) {
        // They run out on their own.
        deps.log.error({ err, worker: id }, 'delivery worker could not free a lease');
      }
    }
    releasing = undefined;
  }

  function launch(job: AttemptJob): void {
    count(inflightPerChannel, job.channel_id, 1);
    const p = attempt(job).finally(() => {
      inflight.delete(p);
      count(inflightPerChannel, job.channel_id, -1);
      countFinished(job.channel_id, deps.clock.now());
      if (!inflightPerChannel.has(job.channel_id) && !queuedPerChannel.has(job.channel_id) && pace.size > 4 * concurrency) {
        pace.delete(job.channel_id);
      }
      pump();
      wake();
    });
    inflight.add(p);
  }

  async function attempt(job: AttemptJob): Promise<void> {
    const startedAt = deps.clock.now();
    const headers = deliveryHeaders(job.body, job.secret, Math.floor(startedAt / 1000));
    const outcome = await client.post(job.url, job.body, headers, abort.signal);
    if (outcome.kind !== 'aborted') {
      unrecorded++;
      enqueue({ job, verdict: outcome, startedAt });
      return;
    }
    toRelease.push(job.id);
    await (releasing ??= releaseQueued());
  }

  function enqueue(item: FinishedAttempt): void {
    toRecord.push(item);
    // Deferred to the check phase, so every response that arrived in this turn of the event loop joins the batch.
    flushing ??= new Promise((resolve) => setImmediate(resolve)).then(flush);
  }

  /** Resolves once every finished attempt's verdict has been recorded (or its cycle failed). */
  function recordedAll(): Promise<void> {
    return unrecorded === 0 ? Promise.resolve() : new Promise((resolve) => recordedWaiters.push(resolve));
  }

  /** Records what finished (claiming too, if there is room for a batch), until no verdict waits. */
  async function flush(): Promise<void> {
    while (toRecord.length > 0) await cycle(false).catch(() => 0); // a failed recording is logged by the cycle
    flushing = undefined;
  }

  /** Waits `ms`, or less when woken; resolves true when the full interval passed. */
  function pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(true), ms);
      function done(timedOut = false) {
        clearTimeout(timer);
        if (wakeUp === done) wakeUp = undefined;
        resolve(timedOut);
      }
      wakeUp = done;
    });
  }

  async function loop(): Promise<void> {
    let eager = true;
    while (!stopping) {
      let claimed = 0;
      try {
        claimed = await tick(eager);
      } catch (err) {
        deps.log.error({ err, worker: id }, 'delivery worker could not claim deliveries');
        await pause(ERROR_BACKOFF_MS);
        continue;
      }
      if (stopping) break;
      // Found work and still has room: look again at once; otherwise wait for a finished attempt or the poll interval.
      if (claimed > 0 && claimRoom() > 0) continue;
      // Woken by a finished attempt: claim in batches; after a full idle interval: claim whatever room there is.
      eager = await pause(idlePollMs);
      // Let every attempt that finished in the same batch free its slot first, so the next claim takes them all at once.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  return {
    id,
    wake,
    get recorded() {
      return recorded;
    },
    start() {
      running ??= loop();
    },
    async drain() {
      lastSweep = -Infinity;
      let eager = true;
      for (;;) {
        const claimed = await tick(eager);
        if (claimed > 0 && claimRoom() > 0) continue;
        if (inflight.size === 0 && queue.length === 0) {
          if (claimed > 0) continue;
          if (stopping) return;
          if (unrecorded > 0 || releasing) {
            await Promise.all([recordedAll(), releasing]);
            eager = true;
            continue;
          }
          // Done only when a claim that excluded and limited no channel found nothing due.
          if (!eager || !lastClaimUnconstrained) {
            eager = true;
            continue;
          }
          return;
        }
        if (inflight.size > 0) await Promise.race(inflight);
        await new Promise((resolve) => setImmediate(resolve));
        eager = inflight.size === 0;
      }
    },
    async stop(graceMs = 15_000) {
      stopping = true;
      wake();
      await running;
      pump(); // gives back every queued lease
      if (inflight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
        await Promise.race([Promise.all(inflight), grace]);
        clearTimeout(timer);
        abort.abort();
        await Promise.all(inflight);
      }
      await Promise.all([recordedAll(), releasing]);
      await cycling;
      // A cycle that was running when stop began gives back, unsent, what it claimed.
      await releasing;
      await client.close();
      await store.close();
    },
  };
}

// The delivery loop, in stages: claim due deliveries up to the free slots (leased, at most `perChannel` in flight per
// channel), POST each through the guarded client, record each verdict when it arrives. Retry times live on the rows,
// so the loop schedules nothing itself, and a dead or slow channel holds at most its own few slots.
import { setMaxListeners } from 'node:events';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { newId, type Deps } from '../../deps.ts';
import { createOutboundClient, type OutboundClient, type OutboundOptions } from '../../net/outbound.ts';
import { cancelUndeliverable, releaseLeases, type AttemptJob } from './claim.repo.ts';
import { claimDue, recordVerdict } from './delivery.service.ts';
import { deliveryHeaders } from './signature.ts';

/**
 * Tuning of one worker; the defaults (DEFAULTS) suit one process. Tests inject the outbound resolver, policy, CA and
 * timeout.
 */
export interface WorkerOptions {
  /** Written into lease_owner; random per worker by default. */
  id?: string;
  /** Attempts in flight at once in this worker: 32 (receivers are waited on, not computed for: mostly idle sockets). */
  concurrency?: number;
  /** Attempts in flight at once to one channel in this worker: 4 (a dead channel holds at most 4 slots). */
  perChannel?: number;
  /**
   * How often an idle worker looks for due deliveries: each second (the fallback for wake-ups, and what finds retries).
   */
  pollMs?: number;
  /** How long a claim holds a delivery (ms of the deps clock): 60 s, well above one attempt's 10 s budget. */
  leaseMs?: number;
  /** Guarded-client options; production uses the defaults. */
  outbound?: OutboundOptions;
}

const DEFAULTS = { concurrency: 32, perChannel: 4, pollMs: 1_000, leaseMs: 60_000 };
type Limits = typeof DEFAULTS;
/** How often deliveries of disabled or deleted channels are swept to `cancelled` (ms of the deps clock). */
const SWEEP_EVERY_MS = 5_000;
/** How long the loop waits after a database failure before trying again (ms). */
const ERROR_BACKOFF_MS = 1_000;

/** A running (or runnable) worker: id, recorded, start(), wake(), drain(), stop(graceMs). */
export type DeliveryWorker = Pick<LoopWorker, 'id' | 'recorded' | 'start' | 'wake' | 'drain' | 'stop'>;

/** Creates a worker over `deps`. */
export function createDeliveryWorker(deps: Deps, options: WorkerOptions = {}): DeliveryWorker {
  const id = options.id ?? `w-${newId(deps.random).slice(0, 12)}`;
  const {
    concurrency = DEFAULTS.concurrency,
    perChannel = DEFAULTS.perChannel,
    pollMs = DEFAULTS.pollMs,
    leaseMs = DEFAULTS.leaseMs,
  } = options;
  return new LoopWorker(deps, id, { concurrency, perChannel, pollMs, leaseMs }, createOutboundClient(options.outbound));
}

class LoopWorker {
  private readonly abort = new AbortController();
  /** Attempts in flight, and their count per channel: the slots and the per-channel caps. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly busy = new Map<string, number>();
  /** The claim running now: claims run one at a time, so each one's caps count every attempt started before it. */
  private claiming: Promise<unknown> = Promise.resolve();
  private lastSweep = -Infinity;
  /** Set by wake(): the loop claims again before it idles. */
  private woken = false;
  private endIdle: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly deps: Deps,
    readonly id: string,
    private readonly limits: Limits,
    private readonly client: OutboundClient,
  ) {
    setMaxListeners(0, this.abort.signal); // one listener per attempt in flight
  }

  /** Attempts this worker has recorded so far (for operators' status lines). */
  recorded = 0;

  /** Runs the loop in the background until stop(). */
  start(): void {
    this.running ??= this.loop();
  }

  /** Makes the loop claim now instead of at its next poll (deliveries were just made due); callable unbound. */
  wake = (): void => {
    this.woken = true;
    this.endIdle?.();
  };

  /** Runs until nothing is due and nothing is in flight (tests move the clock and drain; never sleep). */
  async drain(): Promise<void> {
    this.lastSweep = -Infinity; // sweep at once
    for (;;) {
      const idleBefore = this.inFlight.size === 0;
      const started = await this.claim();
      // A claim that found nothing while nothing was in flight excluded no channel: nothing is due.
      if (started === 0 && this.inFlight.size === 0 && (idleBefore || this.stopping)) return;
      if (this.inFlight.size > 0 && (started === 0 || this.inFlight.size >= this.limits.concurrency))
        await Promise.race(this.inFlight);
    }
  }

  /**
   * Stops claiming, lets attempts in flight finish for up to `graceMs`, then aborts the rest and frees their leases.
   */
  stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    this.endIdle?.();
    this.stopped ??= (async () => {
      await this.running;
      await this.claiming; // a claim that was running gives back what it leased
      await Promise.race([Promise.all(this.inFlight), sleep(graceMs, undefined, { ref: false })]);
      this.abort.abort(); // what is still in flight gives its lease back, unrecorded
      await Promise.all(this.inFlight);
      await this.client.close();
    })();
    return this.stopped;
  }

  private async loop(): Promise<void> {
    let failing = false;
    while (!this.stopping) {
      this.woken = false;
      try {
        const started = await this.claim();
        if (failing) this.deps.log.info({ worker: this.id }, 'delivery worker can claim deliveries again');
        failing = false;
        // Started some and slots are still free: more may be due. Woken meanwhile: something new is due.
        if ((started > 0 && this.inFlight.size < this.limits.concurrency) || this.woken) continue;
        await this.idle(this.limits.pollMs);
      } catch (err) {
        // Logged once per outage, not once a second.
        if (!failing) this.deps.log.error({ err, worker: this.id }, 'delivery worker could not claim deliveries');
        failing = true;
        await this.idle(ERROR_BACKOFF_MS, false); // wake-ups do not cut it short: one try a second while it fails
      }
    }
  }

  /** Waits `ms`, or less when stopped or (if `wakeable`) woken. */
  private idle(ms: number, wakeable = true): Promise<void> {
    if ((wakeable && this.woken) || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.endIdle = () => {
        if (!wakeable && !this.stopping) return;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Runs a claim after any running one, on the next turn: attempts finishing in this turn free their slots first. */
  private claim(): Promise<number> {
    const run = this.claiming.then(() => nextTurn()).then(() => this.claimNow());
    this.claiming = run.catch(() => undefined);
    return run;
  }

  /**
   * Sweeps now and then, claims up to the free slots (per-channel caps included), starts each attempt; returns how
   * many.
   */
  private async claimNow(): Promise<number> {
    const slots = this.limits.concurrency - this.inFlight.size;
    if (this.stopping || slots <= 0) return 0;
    const now = this.deps.clock.now();
    if (now - this.lastSweep >= SWEEP_EVERY_MS || now < this.lastSweep) {
      await cancelUndeliverable(this.deps.db, now);
      this.lastSweep = now;
    }
    const jobs = await claimDue(this.deps, this.id, {
      slots,
      perChannel: this.limits.perChannel,
      busy: this.busy,
      leaseMs: this.limits.leaseMs,
    });
    if (this.stopping) {
      await releaseLeases(
        this.deps.db,
        jobs.map((j) => j.id),
        this.id,
      ); // stop() began meanwhile: given back unsent
      return 0;
    }
    for (const job of jobs) this.launch(job);
    return jobs.length;
  }

  private launch(job: AttemptJob): void {
    const channel = job.channel_id;
    this.busy.set(channel, (this.busy.get(channel) ?? 0) + 1);
    const attempt = this.attempt(job).finally(() => {
      const n = this.busy.get(channel)!;
      // A slot or a channel share that was full is free again: due deliveries may have waited for it.
      if (this.inFlight.size >= this.limits.concurrency || n >= this.limits.perChannel) this.wake();
      this.inFlight.delete(attempt);
      if (n > 1) this.busy.set(channel, n - 1);
      else this.busy.delete(channel);
    });
    this.inFlight.add(attempt);
  }

  /** One attempt: POST, then its verdict recorded (or, aborted by stop(), its lease given back). Never rejects. */
  private async attempt(job: AttemptJob): Promise<void> {
    try {
      const startedAt = this.deps.clock.now();
      const headers = deliveryHeaders(job.body, job.secret, Math.floor(startedAt / 1000));
      const t0 = performance.now();
      const outcome = await this.client.post(job.url, job.body, headers, this.abort.signal);
      const durationMs = performance.now() - t0;
      if (outcome.kind === 'aborted') await releaseLeases(this.deps.db, [job.id], this.id);
      else if (await recordVerdict(this.deps, this.id, job, outcome, startedAt, durationMs)) this.recorded++;
    } catch (err) {
      // The database failed, not the receiver: the lease runs out and the attempt is made again (at-least-once).
      this.deps.log.error(
        { err, worker: this.id, delivery: job.id },
        'delivery worker could not record an attempt or free its lease',
      );
    }
  }
}

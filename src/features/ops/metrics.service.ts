// Prometheus metrics through prom-client, on a private registry per app instance (never the global one): counters the
// process bumps when it decides something, and gauges read from the database when scraped, so every instance reports
// the same truth. No label carries a username, URL, address or other unbounded value.
import { createRequire } from 'node:module';
import type * as client from 'prom-client';
import type { Deps, Metrics, PasskeyOutcome, SignInOutcome } from '../../deps.ts';
import {
  COUNT_CAP,
  countDead,
  countDeadSince,
  countDue,
  failingChannels,
  LOCKS_CAP,
  lockedThrottleKeys,
  oldestDueAt,
} from './ops.repo.ts';
import { checkReadiness } from './readiness.service.ts';

/** Methods counted by name; any other (a client may send anything) is counted as "other". */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The window of the recent dead-letter gauge (ms). */
const RECENT_DEAD_MS = 60 * 60_000;
/** prom-client default metrics that are gauges with a `_total` suffix (promtool check metrics refuses them). */
const LINT_REFUSED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
const SIGN_IN_OUTCOMES: SignInOutcome[] = ['success', 'failure', 'throttled', 'second_factor_owed'];
const PASSKEY_STEPS = ['sign_in', 'second_factor'] as const;
const PASSKEY_OUTCOMES: PasskeyOutcome[] = [
  'success',
  'invalid',
  'expired',
  'unknown_credential',
  'cloned',
  'suspended',
  'throttled',
  'busy',
];
const VERDICT_CLASSES = ['delivered', 'http_3xx', 'http_4xx', 'http_5xx', 'http_other', 'no_response'];

/** A verdict's class for the attempts counter: delivered, the failed HTTP status class, or no response at all. */
export function verdictClass(verdict: 'delivered' | 'failed', status: number | null): string {
  if (verdict === 'delivered') return 'delivered';
  if (status === null) return 'no_response';
  return status >= 300 && status < 600 ? `http_${Math.floor(status / 100)}xx` : 'http_other';
}

/**
 * A throttle key's kind ("password:pair", "totp:addr", ...): the two leading segments the code writes, never the name
 * or address after them.
 */
export function throttleKind(key: string): string {
  const m = /^([a-z]+):([a-z]+):/.exec(key);
  return m ? `${m[1]}:${m[2]}` : 'other';
}

/** prom-client, loaded when metrics are switched on (SVC_METRICS_TOKEN set) and not before: it costs about 13 MB. */
function promClient(): typeof client {
  return createRequire(import.meta.url)('prom-client') as typeof client;
}

/** The metrics of one app instance: its registry (for the /metrics route) and the hooks deps.metrics points at. */
export class PrometheusMetrics implements Metrics {
  private readonly prom = promClient();
  readonly registry = new this.prom.Registry();
  private readonly requests: client.Counter<'method' | 'route' | 'status'>;
  private readonly durations: client.Histogram<'method' | 'route' | 'status'>;
  private readonly attempts: client.Counter<'verdict'>;
  private readonly firstAttempt: client.Histogram;
  private readonly signIns: client.Counter<'outcome'>;
  private readonly backchannelLogouts: client.Counter<'outcome'>;
  private readonly backchannelEnded: client.Counter;
  private readonly passkeys: client.Counter<'step' | 'outcome'>;

  constructor(deps: Pick<Deps, 'db' | 'clock' | 'log'>) {
    const registers = [this.registry];
    this.prom.collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which promtool's lint refuses; the same counts stay by type in nodejs_active_handles
    // etc.
    for (const name of LINT_REFUSED_DEFAULTS) this.registry.removeSingleMetric(name);
    this.requests = new this.prom.Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new this.prom.Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.attempts = new this.prom.Counter({
      name: 'svc_delivery_attempts_total',
      help: 'Delivery attempts made by this process, by verdict class (delivered, http_3xx, http_4xx, http_5xx, http_other, no_response).',
      labelNames: ['verdict'],
      registers,
    });
    this.firstAttempt = new this.prom.Histogram({
      name: 'svc_delivery_first_attempt_delay_seconds',
      help: 'From a delivery being queued (emit or re-send) to the start of its first attempt.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.signIns = new this.prom.Counter({
      name: 'svc_signins_total',
      help: 'Password, passkey and second-factor sign-in steps, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.backchannelLogouts = new this.prom.Counter({
      name: 'svc_sso_backchannel_logouts_total',
      help: "Identity providers' back-channel logouts received, by outcome (accepted or refused).",
      labelNames: ['outcome'],
      registers,
    });
    this.backchannelEnded = new this.prom.Counter({
      name: 'svc_sso_backchannel_sessions_ended_total',
      help: 'Sessions ended by accepted back-channel logouts.',
      registers,
    });
    this.passkeys = new this.prom.Counter({
      name: 'svc_passkey_signins_total',
      help: 'Passkey answers, by step (sign_in: a passkey alone at the sign-in page; second_factor) and outcome class.',
      labelNames: ['step', 'outcome'],
      registers,
    });
    for (const verdict of VERDICT_CLASSES) this.attempts.inc({ verdict }, 0);
    for (const outcome of SIGN_IN_OUTCOMES) this.signIns.inc({ outcome }, 0);
    for (const outcome of ['accepted', 'refused']) this.backchannelLogouts.inc({ outcome }, 0);
    for (const step of PASSKEY_STEPS) for (const outcome of PASSKEY_OUTCOMES) this.passkeys.inc({ step, outcome }, 0);
    this.databaseGauges(deps, registers);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method: METHODS.has(method) ? method : 'other', route, status: String(status) };
    this.requests.inc(labels);
    this.durations.observe(labels, seconds);
  }

  deliveryAttempt(verdict: 'delivered' | 'failed', status: number | null, sinceEmitMs: number | undefined): void {
    this.attempts.inc({ verdict: verdictClass(verdict, status) });
    if (sinceEmitMs !== undefined) this.firstAttempt.observe(Math.max(0, sinceEmitMs) / 1000);
  }

  signIn(outcome: SignInOutcome): void {
    this.signIns.inc({ outcome });
  }

  backchannelLogout(outcome: 'accepted' | 'refused', sessionsEnded: number): void {
    this.backchannelLogouts.inc({ outcome });
    this.backchannelEnded.inc(sessionsEnded);
  }

  passkey(step: 'sign_in' | 'second_factor', outcome: PasskeyOutcome): void {
    this.passkeys.inc({ step, outcome });
  }

  /**
   * Gauges read when scraped. A failed read leaves the gauge without a sample (never a stale value) and svc_ready at 0.
   */
  private databaseGauges(deps: Pick<Deps, 'db' | 'clock' | 'log'>, registers: client.Registry[]): void {
    const { db, clock } = deps;
    const gauge = <L extends string = never>(
      name: string,
      help: string,
      read: (g: client.Gauge<L>) => Promise<void>,
      labelNames: L[] = [],
    ) =>
      new this.prom.Gauge<L>({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          await read(this).catch((err: unknown) =>
            deps.log.warn({ err, metric: name }, 'metrics: a database gauge could not be read'),
          );
        },
      });
    gauge(
      'svc_ready',
      'Whether this instance is ready (database reachable, migrations current), as /readyz answers: 1 or 0.',
      async (g) => {
        g.set((await checkReadiness(deps)).ready ? 1 : 0);
      },
    );
    gauge(
      `svc_deliveries_due`,
      `Pending deliveries whose attempt is due now (counted up to ${COUNT_CAP}).`,
      async (g) => {
        g.set(await countDue(db, clock.now()));
      },
    );
    gauge(
      'svc_deliveries_oldest_due_age_seconds',
      'How long the oldest due delivery has been due; 0 when none is.',
      async (g) => {
        const now = clock.now();
        const oldest = await oldestDueAt(db, now);
        g.set(oldest === null ? 0 : Math.max(0, now - oldest) / 1000);
      },
    );
    gauge(
      'svc_deliveries_dead',
      `Dead-lettered deliveries held in the store (counted up to ${COUNT_CAP}; retention removes them with their message).`,
      async (g) => {
        g.set(await countDead(db));
      },
    );
    gauge('svc_deliveries_dead_last_hour', 'Deliveries dead-lettered within the last hour.', async (g) => {
      g.set(await countDeadSince(db, clock.now() - RECENT_DEAD_MS));
    });
    gauge('svc_channels_failing', 'Enabled channels whose latest delivery attempt failed.', async (g) => {
      g.set(await failingChannels(db));
    });
    gauge(
      'svc_signin_throttle_locks',
      `Sign-in throttle keys locked now, by kind (password:pair, password:acct, password:addr, totp:..., counted up to ${LOCKS_CAP} in all).`,
      async (g) => {
        const counts = new Map<string, number>();
        for (const key of await lockedThrottleKeys(db, clock.now()))
          counts.set(throttleKind(key), (counts.get(throttleKind(key)) ?? 0) + 1);
        for (const [kind, n] of counts) g.set({ kind }, n);
      },
      ['kind'],
    );
  }
}

/**
 * The Prometheus metrics of an app whose config has a metrics token: made once and set as `deps.metrics`, so the
 * delivery worker and sign-in steps sharing these deps count into the same registry. Reuses metrics already attached.
 */
export function attachMetrics(deps: Deps): PrometheusMetrics {
  if (deps.metrics instanceof PrometheusMetrics) return deps.metrics;
  const metrics = new PrometheusMetrics(deps);
  deps.metrics = metrics;
  return metrics;
}

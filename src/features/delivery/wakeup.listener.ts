// The PostgreSQL side of real-time delivery: one dedicated session LISTENing for notifyDeliveriesDue(), so an emit in
// any process wakes this process's workers. LISTEN needs a real session (not the pool, nor a transaction-mode pooler).
// Losing it never stops delivery: the workers' idle poll finds the work meanwhile.
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import type { Logger } from 'pino';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { DELIVERIES_DUE_CHANNEL } from '../messages/deliveries-due.ts';

/** How the listener appears in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'svc delivery listener';

/** A running listener; close() stops it for good. */
export interface DeliveryListener {
  close(): Promise<void>;
}

/** Where to listen and whom to tell. */
export interface DeliveryListenerOptions {
  /** A postgres:// URL reaching PostgreSQL directly (SVC_DATABASE_LISTEN_URL, else DATABASE_URL). */
  url: string;
  /** Outages are logged once each at warn, recoveries at info; never the URL itself. */
  log: Logger;
  /** Called on each notification (with its payload) and once after every (re)connect (without one), to catch up. */
  onNotify: (payload?: string) => void;
  /** First wait before reconnecting (default 0.5 s), doubled per failure up to maxRetryMs. */
  firstRetryMs?: number;
  /**
   * Longest wait between reconnection attempts (default 2 s): real-time delivery is back within about that long of the
   * database's return, for one cheap connection attempt every 2 s while it is gone.
   */
  maxRetryMs?: number;
  /** How long one connection attempt may take (default: the pool's, SVC_DATABASE_CONNECT_TIMEOUT). */
  connectTimeoutMs?: number;
}

/** Starts listening in the background; never throws and never blocks the caller. */
export function startDeliveryListener(options: DeliveryListenerOptions): DeliveryListener {
  const { url, log, onNotify } = options;
  const firstRetryMs = options.firstRetryMs ?? 500;
  const maxRetryMs = options.maxRetryMs ?? 2_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const where = describeTarget(url);
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;
  let outage = false;
  let closed = false;

  const notify = (payload?: string) => {
    try {
      onNotify(payload);
    } catch (err) {
      log.error({ err }, 'delivery listener: wake-up failed');
    }
  };

  // Called for every error or end of a session; only the first one per session counts.
  const lost = (session: pg.Client, err?: Error) => {
    if (session !== client) return;
    client = undefined;
    session.end().catch(() => {});
    if (closed) return;
    if (!outage) {
      outage = true;
      log.warn(
        { ...where, error: err?.message ?? 'connection ended' },
        'delivery listener disconnected; workers poll until it is back',
      );
    }
    retryTimer = setTimeout(connect, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, maxRetryMs);
  };

  async function connect(): Promise<void> {
    retryTimer = undefined;
    if (closed) return;
    const session = await newSession(url, connectTimeoutMs, log, where);
    if (!session || closed) return;
    client = session;
    session.on('error', (err) => lost(session, err));
    session.on('end', () => lost(session));
    session.on('notification', (message) => {
      if (message.channel === DELIVERIES_DUE_CHANNEL) notify(message.payload ?? '');
    });
    try {
      await session.connect();
      await session.query(`LISTEN ${DELIVERIES_DUE_CHANNEL}`);
    } catch (err) {
      lost(session, err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (session !== client) return; // lost (or closed) while connecting
    if (outage) log.info(where, 'delivery listener connected again');
    outage = false;
    retryMs = firstRetryMs;
    // Deliveries made due while nobody listened would otherwise wait for the poll.
    notify();
  }

  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const session = client;
      client = undefined;
      // Bounded: an unreachable server must not hold up shutdown.
      if (session) await Promise.race([session.end().catch(() => {}), delay(1_000, undefined, { ref: false })]);
    },
  };
}

/**
 * Wakes `worker` at once whenever this process makes deliveries due and, on PostgreSQL, whenever any process does
 * (LISTEN on a session of its own); the idle poll stays the fallback. Returns the function that stops both.
 */
export function wireWakeups(deps: Deps, worker: { wake(): void }): () => Promise<void> {
  const unsubscribe = deps.wakeup.subscribe(() => worker.wake());
  const database = deps.config.database;
  const listener =
    database.kind === 'postgres'
      ? startDeliveryListener({
          url: database.listenUrl ?? database.url,
          connectTimeoutMs: database.connectTimeoutMs,
          log: deps.log,
          onNotify: () => deps.wakeup.wake(),
        })
      : undefined;
  return async () => {
    unsubscribe();
    await listener?.close();
  };
}

/** The listening session's client, or undefined when the driver refuses the URL (logged; the poll still works). */
async function newSession(
  url: string,
  connectTimeoutMs: number,
  log: Logger,
  where: ReturnType<typeof describeTarget>,
): Promise<pg.Client | undefined> {
  const { default: pg } = await import('pg'); // loaded on PostgreSQL only, as openDatabase() loads it
  try {
    return new pg.Client({
      connectionString: url,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: connectTimeoutMs,
    });
  } catch (err) {
    log.error({ ...where, error: err instanceof Error ? err.message : String(err) }, 'delivery listener cannot start');
    return undefined;
  }
}

// Host and database only: a URL may carry a password, which never reaches a log.
function describeTarget(url: string): { host: string; database: string } {
  try {
    const u = new URL(url);
    return { host: u.host, database: decodeURIComponent(u.pathname.slice(1)) };
  } catch {
    return { host: 'unparsable URL', database: '' };
  }
}

// Where a worker records verdicts and claims its next deliveries. On PostgreSQL: a session of its own, whose settings
// give the claim its ordered plan. On a SQLite file: a thread of its own with its own connection, so the statements
// (about half of a delivery's CPU on the event loop otherwise) run beside the requests instead of between them.
// SQLite serialises the writers across connections and threads as it does across processes (WAL, busy_timeout).
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { openPostgresSession } from '../../db/connect.ts';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { CLAIM_SESSION_SETTINGS, recordAndClaimPg, type AttemptRecord, type ClaimParams, type RecordAndClaimResult } from './delivery.repo.ts';
import { recordAndClaimSqlite } from './delivery.service.ts';

/** One worker's recording and claiming connection. */
export interface DeliveryStore {
  /** Records `records` (those `owner` still holds) and, with `claim`, leases the next due deliveries, atomically. */
  recordAndClaim(records: AttemptRecord[], owner: string, finishedAt: number, claim?: ClaimParams): Promise<RecordAndClaimResult>;
  /** Where the next request runs: the worker's own PostgreSQL session, its SQLite thread, or the event loop's connection. */
  readonly runsOn: 'session' | 'thread' | 'event loop';
  /** Closes what the store opened; call once nothing is waiting on it. */
  close(): Promise<void>;
}

/** How long after a store thread died the next one is started; doubled after each one that never became ready, to at most 5 minutes. */
export const THREAD_RESTART_MS = 5_000;
const MAX_THREAD_RESTART_MS = 300_000;

/** The store for `deps`' database; `thread: false` keeps SQLite's statements on the caller's connection and thread. */
export function openDeliveryStore(deps: Deps, options: { thread?: boolean } = {}): DeliveryStore {
  const database = deps.config.database;
  if (deps.dialect === 'postgres' && database.kind === 'postgres') {
    const session = openPostgresSession(database.url, CLAIM_SESSION_SETTINGS);
    return { runsOn: 'session', recordAndClaim: (...args) => recordAndClaimPg(session, ...args), close: () => session.destroy() };
  }
  // An in-memory or temporary database exists only inside its one connection: no other can share it.
  if (database.kind === 'sqlite' && database.path !== ':memory:' && database.path !== '' && options.thread !== false) {
    return threadStore(database.path, deps.db, deps.log);
  }
  return { runsOn: 'event loop', recordAndClaim: (...args) => recordAndClaimSqlite(deps.db, ...args), close: async () => {} };
}

/** What the thread says: it is ready (its connection is open), or the answer to a request. */
export type StoreReply = { ready: true } | { id: number; result: RecordAndClaimResult } | { id: number; error: { message: string; code?: string } };
/** What the thread is asked. */
export type StoreRequest = { id: number; records: AttemptRecord[]; owner: string; finishedAt: number; claim?: ClaimParams } | { id: number; close: true };

/**
 * A SQLite store whose statements run on a thread of its own, started at once. Until the thread has opened its
 * connection (and whenever it is down) requests run on `db` on the event loop instead, so a worker never waits for
 * the thread, and a thread that cannot start costs speed, not deliveries. A thread that dies fails the requests it
 * had (the worker treats that as any database failure: an open transaction rolls back with its connection; one that
 * had committed keeps its verdicts, and its new leases run out unused) and is started again THREAD_RESTART_MS later.
 * It keeps the process alive only while a request is waiting on it.
 */
function threadStore(path: string, db: Kysely<DB>, log: Logger): DeliveryStore {
  let thread: Worker | undefined;
  let ready = false;
  let closing = false;
  let restartAt = 0;
  let restartDelay = THREAD_RESTART_MS;
  let nextId = 0;
  const waiting = new Map<number, { resolve(value: RecordAndClaimResult): void; reject(err: Error): void }>();

  function start(): void {
    // execArgv: [] so the thread loads the sources the same way whether or not the parent was started with --import tsx.
    const w = new Worker(new URL('./delivery.store.thread.mjs', import.meta.url), { workerData: { path }, execArgv: [] });
    thread = w;
    let wasReady = false;
    w.on('message', (reply: StoreReply) => {
      if ('ready' in reply) {
        ready = thread === w;
        wasReady = true;
        restartDelay = THREAD_RESTART_MS;
        return;
      }
      const waiter = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0 && !closing) w.unref();
      if (!waiter) return;
      if ('error' in reply) waiter.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else waiter.resolve(reply.result);
    });
    const died = (err: Error) => {
      if (thread !== w) return;
      thread = undefined;
      ready = false;
      restartAt = Date.now() + restartDelay;
      if (!wasReady) restartDelay = Math.min(2 * restartDelay, MAX_THREAD_RESTART_MS);
      if (!closing) log.error({ err }, 'delivery store thread stopped; recording on the event loop until it is restarted');
      for (const waiter of waiting.values()) waiter.reject(err);
      waiting.clear();
    };
    w.on('error', died);
    w.on('exit', (code) => died(new Error(`the delivery store thread exited (code ${code})`)));
    // Only after the listeners: on Node 20 adding a 'message' listener to an unreferenced worker references it again.
    w.unref();
  }
  start();

  return {
    get runsOn() {
      return ready ? 'thread' : 'event loop';
    },
    recordAndClaim(records, owner, finishedAt, claim) {
      if (!thread && !closing && Date.now() >= restartAt) start();
      if (!ready || !thread) return recordAndClaimSqlite(db, records, owner, finishedAt, claim);
      const w = thread;
      const id = nextId++;
      w.ref();
      return new Promise<RecordAndClaimResult>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        try {
          w.postMessage({ id, records, owner, finishedAt, claim } satisfies StoreRequest);
        } catch (err) {
          waiting.delete(id);
          if (waiting.size === 0) w.unref();
          reject(err as Error);
        }
      });
    },
    async close() {
      closing = true;
      const w = thread;
      if (!w) return;
      // Kept alive until it has closed its connection and exited: an unreferenced thread's exit would not be awaited.
      const exited = new Promise((resolve) => w.once('exit', resolve));
      w.ref();
      w.postMessage({ id: nextId++, close: true } satisfies StoreRequest);
      await exited;
    },
  };
}

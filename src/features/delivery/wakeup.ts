// Real-time delivery: whoever makes deliveries due wakes the workers at once instead of leaving them to the idle poll.
// In this process through a DeliveryWakeup; across processes on PostgreSQL through NOTIFY (see wakeup.listener.ts).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB } from '../../db/schema.ts';

/** The PostgreSQL notification channel every worker process listens on. */
export const DELIVERIES_DUE_CHANNEL = 'svc_deliveries_due';

/** This process's wake-up line: emit() and re-send pull it, the workers of this process subscribe to it. */
export interface DeliveryWakeup {
  /** Calls every subscriber now; never throws into the caller. */
  wake(): void;
  /** Adds a subscriber; returns the function that removes it again. */
  subscribe(listener: () => void): () => void;
}

/** A new wake-up line; a subscriber that throws is reported to `onError` (a bug) and does not stop the others. */
export function createDeliveryWakeup(onError: (err: unknown) => void = () => {}): DeliveryWakeup {
  const listeners = new Set<() => void>();
  return {
    wake() {
      for (const listener of [...listeners]) {
        try {
          listener();
        } catch (err) {
          onError(err);
        }
      }
    },
    subscribe(listener) {
      // A wrapper per subscription, so subscribing one function twice needs two unsubscribes.
      const entry = () => listener();
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
  };
}

/**
 * Called inside the transaction that made deliveries due: on PostgreSQL every listening process is notified when it
 * commits (and nobody when it rolls back; one notification per transaction however often it is called). SQLite has no
 * cross-process signal: other processes find the work by polling.
 */
export async function notifyDeliveriesDue(db: Kysely<DB> | Transaction<DB>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_notify(${DELIVERIES_DUE_CHANNEL}, '')`.execute(db);
}

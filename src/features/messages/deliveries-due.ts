// The cross-process half of waking the delivery workers: whoever makes deliveries due (emit() here, a re-send in the
// delivery feature) notifies PostgreSQL inside its transaction, and every process's listener (delivery's
// wakeup.listener.ts) hears it once that transaction commits.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB } from '../../db/schema.ts';

/** The PostgreSQL notification channel every worker process listens on. */
export const DELIVERIES_DUE_CHANNEL = 'svc_deliveries_due';

/**
 * Called inside the transaction that made deliveries due: on PostgreSQL every listening process is notified when it
 * commits (and nobody when it rolls back; one notification per transaction however often it is called). SQLite has no
 * cross-process signal: other processes find the work by polling.
 */
export async function notifyDeliveriesDue(db: Kysely<DB> | Transaction<DB>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_notify(${DELIVERIES_DUE_CHANNEL}, '')`.execute(db);
}

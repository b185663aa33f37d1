// Attempt throttling kept in the database, so it holds across instances; locks lift by themselves.
// An attempt is reserved (counted) BEFORE the secret is checked, atomically, so a burst of concurrent
// guesses cannot all slip in while the first failures are still being verified.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';

/** A throttle policy: this many attempts inside the window without success locks the key for lockMs. */
export interface ThrottlePolicy {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

const FIFTEEN_MINUTES = 15 * 60_000;

/** Per (account, client address): 5 failures in 15 minutes lock that pair for 15 minutes. */
export const ACCOUNT_ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };
/** Per account from anywhere: 50 failures in 15 minutes lock it for 15 minutes (distributed guessing). */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 50, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };
/** Per client address (IPv6 by /64): 30 failures in 15 minutes lock it for 15 minutes (spraying many accounts). */
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 30, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };

/** One key and the policy that governs it. */
export interface ThrottleKey {
  key: string;
  policy: ThrottlePolicy;
}

export type Reservation = { ok: true; keys: ThrottleKey[] } | { ok: false; retryAfterMs: number };

/**
 * Counts one attempt against every key, refusing (and counting nothing) if any key is locked or already has
 * as many attempts in its window as its policy allows. Settle the reservation with settleAttempt().
 */
export async function reserveAttempt(deps: Deps, keys: ThrottleKey[]): Promise<Reservation> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const rows = [];
    for (const { key, policy } of keys) {
      const row = await lockedRow(trx, deps, key, now);
      if (row.locked_until > now) return { ok: false, retryAfterMs: row.locked_until - now };
      const fresh = now - row.window_started_at >= policy.windowMs;
      const failures = fresh ? 0 : row.failures;
      if (failures >= policy.maxFailures) return { ok: false, retryAfterMs: Math.max(1, row.window_started_at + policy.windowMs - now) };
      rows.push({ key, failures, windowStart: fresh ? now : row.window_started_at });
    }
    for (const r of rows) {
      await trx.updateTable('auth_throttle').set({ failures: r.failures + 1, window_started_at: r.windowStart }).where('key', '=', r.key).execute();
    }
    return { ok: true, keys };
  });
}

/**
 * Settles a reserved attempt. A failure leaves it counted and locks any key that reached its limit; a success
 * clears the keys named in `clearOnSuccess` and gives the attempt back to the others.
 */
export async function settleAttempt(deps: Deps, reservation: { keys: ThrottleKey[] }, success: boolean, clearOnSuccess: string[] = []): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    for (const { key, policy } of reservation.keys) {
      const row = await lockedRow(trx, deps, key, now);
      if (success && clearOnSuccess.includes(key)) {
        await trx.deleteFrom('auth_throttle').where('key', '=', key).execute();
      } else if (success) {
        await trx.updateTable('auth_throttle').set({ failures: Math.max(0, row.failures - 1) }).where('key', '=', key).execute();
      } else if (row.failures >= policy.maxFailures) {
        await trx.updateTable('auth_throttle').set({ failures: 0, window_started_at: now, locked_until: now + policy.lockMs }).where('key', '=', key).execute();
      }
    }
  });
}

/** Deletes counters that are neither locked nor inside a window any more (housekeeping). */
export async function pruneThrottles(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  const longestWindow = Math.max(ACCOUNT_ADDRESS_POLICY.windowMs, ACCOUNT_POLICY.windowMs, ADDRESS_POLICY.windowMs);
  await deps.db
    .deleteFrom('auth_throttle')
    .where('locked_until', '<=', now)
    .where('window_started_at', '<=', now - longestWindow)
    .execute();
}

async function lockedRow(trx: Transaction<DB>, _deps: Deps, key: string, now: number) {
  // One statement inserts the row or locks the existing one. (A separate insert-if-absent then SELECT ... FOR UPDATE
  // found nothing on PostgreSQL when a concurrent successful attempt deleted the row in between: a 500.)
  return trx
    .insertInto('auth_throttle')
    .values({ key, failures: 0, window_started_at: now, locked_until: 0 })
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ key: eb.ref('excluded.key') })))
    .returningAll()
    .executeTakeFirstOrThrow();
}

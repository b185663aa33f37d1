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
  /**
   * When set, each consecutive lock lasts twice as long as the one before, up to maxLockMs. The count survives the
   * lock's end; a success resets it, and so does a quiet spell of forgetAfterMs after the last lock ended.
   */
  escalate?: { maxLockMs: number; forgetAfterMs: number };
}

const FIFTEEN_MINUTES = 15 * 60_000;
const ONE_DAY = 24 * 60 * 60_000;

/** Per (account, client address): 5 failures in 15 minutes lock that pair for 15 minutes. */
export const ACCOUNT_ADDRESS_POLICY: ThrottlePolicy = {
  maxFailures: 5,
  windowMs: FIFTEEN_MINUTES,
  lockMs: FIFTEEN_MINUTES,
};
/** Per account from anywhere: 50 failures in 15 minutes lock it for 15 minutes (distributed guessing). */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 50, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };
/**
 * Per device cookie, in place of the per-account limit when a client shows a valid device cookie of the account it
 * signs in to: 5 failures in 15 minutes lock that device for 15 minutes, so a stolen cookie guesses no faster than a
 * pair.
 */
export const DEVICE_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };
/**
 * Per signed-in session, in place of the per-account limit when a session re-confirms its password (profile acts):
 * 5 failures in 15 minutes lock that session's confirmations for 15 minutes.
 */
export const SESSION_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };
/** Per client address (IPv6 by /64): 30 failures in 15 minutes lock it for 15 minutes (spraying many accounts). */
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 30, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES };

/**
 * Second-factor codes per account from anywhere: a 6-digit code falls to ~10^6/3 guesses, so far fewer are allowed
 * than for passwords. 10 failures in a day lock the account's code step for 15 minutes, then 30, 60, ... up to a day;
 * the escalation ends only with a successful code (or a week without locks).
 */
export const SECOND_FACTOR_ACCOUNT_POLICY: ThrottlePolicy = {
  maxFailures: 10,
  windowMs: ONE_DAY,
  lockMs: FIFTEEN_MINUTES,
  escalate: { maxLockMs: ONE_DAY, forgetAfterMs: 7 * ONE_DAY },
};
/** Second-factor codes per pending session: after 3 failures the session is ended and the password is owed again. */
export const SECOND_FACTOR_SESSION_POLICY: ThrottlePolicy = { maxFailures: 3, windowMs: ONE_DAY, lockMs: ONE_DAY };

/** One key and the policy that governs it. */
export interface ThrottleKey {
  key: string;
  policy: ThrottlePolicy;
}

/** A counted attempt, or the refusal naming the key that refused it. */
export type Reservation = { ok: true; keys: ThrottleKey[] } | { ok: false; retryAfterMs: number; key: string };

/**
 * Counts one attempt against every key, refusing (and counting nothing) if any key is locked or already has
 * as many attempts in its window as its policy allows. Settle the reservation with settleAttempt().
 * A refusal is decided from reads alone and writes nothing: a flood of refused attempts (a locked address trying
 * new usernames) adds no rows and never takes the write lock. Only an attempt that is counted writes, in one
 * transaction that checks again under the rows' locks and rolls back if a concurrent attempt got there first.
 */
export async function reserveAttempt(deps: Deps, keys: ThrottleKey[]): Promise<Reservation> {
  const now = deps.clock.now();
  const refusal = await refusalNow(deps, keys);
  if (refusal) return refusal;
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const rows = [];
      for (const { key, policy } of keys) {
        const row = await lockedRow(trx, key, policy, now);
        const refusal = refusalOf(row, key, policy, now);
        // Thrown so the transaction rolls back: the rows this attempt inserted are not kept.
        if (refusal) throw new RefusedInRace(refusal);
        const fresh = now - row.window_started_at >= policy.windowMs;
        const windowStart = fresh ? now : row.window_started_at;
        rows.push({
          key,
          failures: fresh ? 0 : row.failures,
          windowStart,
          keepUntil: Math.max(row.keep_until, windowStart + policy.windowMs),
        });
      }
      for (const r of rows) {
        await trx
          .updateTable('auth_throttle')
          .set({ failures: r.failures + 1, window_started_at: r.windowStart, keep_until: r.keepUntil })
          .where('key', '=', r.key)
          .execute();
      }
      return { ok: true, keys } as const;
    });
  } catch (err) {
    if (err instanceof RefusedInRace) return err.refusal;
    throw err;
  }
}

/**
 * Whether an attempt against these keys would be refused now (a key locked, or its window already full), from reads
 * alone: nothing is counted or written. A door uses it to turn a locked client away before it starts something that
 * could only be refused at its end (a passkey ceremony, before the fingerprint or PIN is asked for).
 */
export async function refusalNow(
  deps: Deps,
  keys: ThrottleKey[],
): Promise<Extract<Reservation, { ok: false }> | undefined> {
  const now = deps.clock.now();
  const existing = await deps.db
    .selectFrom('auth_throttle')
    .selectAll()
    .where(
      'key',
      'in',
      keys.map((k) => k.key),
    )
    .execute();
  const byKey = new Map(existing.map((r) => [r.key, r]));
  for (const { key, policy } of keys) {
    const row = byKey.get(key);
    const refusal = row && refusalOf(row, key, policy, now);
    if (refusal) return refusal;
  }
  return undefined;
}

/** A refusal found under the rows' locks, carried out of the transaction so that it rolls back. */
class RefusedInRace extends Error {
  constructor(readonly refusal: Extract<Reservation, { ok: false }>) {
    super('throttled');
  }
}

/** Why `row` refuses another attempt now (locked, or its window already full), or undefined when it allows one. */
function refusalOf(
  row: { locked_until: number; window_started_at: number; failures: number },
  key: string,
  policy: ThrottlePolicy,
  now: number,
): Extract<Reservation, { ok: false }> | undefined {
  if (row.locked_until > now) return { ok: false, retryAfterMs: row.locked_until - now, key };
  const fresh = now - row.window_started_at >= policy.windowMs;
  if (!fresh && row.failures >= policy.maxFailures)
    return { ok: false, retryAfterMs: Math.max(1, row.window_started_at + policy.windowMs - now), key };
  return undefined;
}

/**
 * Settles a reserved attempt. A failure leaves it counted and locks any key that reached its limit; a success
 * clears the keys named in `clearOnSuccess` and gives the attempt back to the others. Returns the keys this
 * call locked.
 */
export async function settleAttempt(
  deps: Deps,
  reservation: { keys: ThrottleKey[] },
  success: boolean,
  clearOnSuccess: string[] = [],
): Promise<{ locked: string[] }> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const locked: string[] = [];
    for (const { key, policy } of reservation.keys) {
      const row = await lockedRow(trx, key, policy, now);
      if (success && clearOnSuccess.includes(key)) {
        await trx.deleteFrom('auth_throttle').where('key', '=', key).execute();
      } else if (success) {
        await trx
          .updateTable('auth_throttle')
          .set({ failures: Math.max(0, row.failures - 1) })
          .where('key', '=', key)
          .execute();
      } else if (row.failures >= policy.maxFailures) {
        const locks = policy.escalate ? consecutiveLocks(policy, row, now) + 1 : 0;
        const lockMs = policy.escalate
          ? Math.min(policy.lockMs * 2 ** (locks - 1), policy.escalate.maxLockMs)
          : policy.lockMs;
        // Kept while the new window, the lock, or (escalating) the memory of the lock can still matter.
        const keepUntil = Math.max(
          row.keep_until,
          now + policy.windowMs,
          now + lockMs + (policy.escalate?.forgetAfterMs ?? 0),
        );
        await trx
          .updateTable('auth_throttle')
          .set({ failures: 0, window_started_at: now, locked_until: now + lockMs, locks, keep_until: keepUntil })
          .where('key', '=', key)
          .execute();
        locked.push(key);
      }
    }
    return { locked };
  });
}

/** Locks so far in an escalating key's run; forgotten after a quiet spell (so housekeeping never changes behaviour). */
function consecutiveLocks(policy: ThrottlePolicy, row: { locks: number; locked_until: number }, now: number): number {
  if (!policy.escalate || row.locks === 0) return 0;
  return now - row.locked_until >= policy.escalate.forgetAfterMs ? 0 : row.locks;
}

/**
 * Deletes counters that can no longer change any decision: window over, unlocked, escalation forgotten (housekeeping).
 */
export async function pruneThrottles(deps: Deps): Promise<void> {
  await deps.db.deleteFrom('auth_throttle').where('keep_until', '<=', deps.clock.now()).execute();
}

async function lockedRow(trx: Transaction<DB>, key: string, policy: ThrottlePolicy, now: number) {
  // One statement inserts the row or locks the existing one. (A separate insert-if-absent then SELECT ... FOR UPDATE
  // found nothing on PostgreSQL when a concurrent successful attempt deleted the row in between: a 500.)
  return trx
    .insertInto('auth_throttle')
    .values({ key, failures: 0, window_started_at: now, locked_until: 0, locks: 0, keep_until: now + policy.windowMs })
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ key: eb.ref('excluded.key') })))
    .returningAll()
    .executeTakeFirstOrThrow();
}

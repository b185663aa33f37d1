// Failure throttling kept in the database, so it holds across instances; locks lift by themselves.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';

/** A throttle policy: this many failures inside the window locks the key for lockMs. */
export interface ThrottlePolicy {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** Per account: 5 failures in 15 minutes lock it for 15 minutes. */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };
/** Per client address: 30 failures in 15 minutes lock it for 15 minutes (shared NATs get some room). */
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 30, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

/** Milliseconds until the first of `keys` unlocks, or 0 when none is locked. */
export async function lockedFor(deps: Deps, keys: string[]): Promise<number> {
  const now = deps.clock.now();
  const rows = await deps.db.selectFrom('auth_throttle').select('locked_until').where('key', 'in', keys).execute();
  return Math.max(0, ...rows.map((r) => r.locked_until - now));
}

/** Counts one failure against a key, locking it when the policy's limit is reached. */
export async function recordFailure(deps: Deps, key: string, policy: ThrottlePolicy): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('auth_throttle')
      .values({ key, failures: 0, window_started_at: now, locked_until: 0 })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await lockRow(trx, deps.dialect, key);
    if (!row) return;
    const fresh = now - row.window_started_at >= policy.windowMs;
    const failures = fresh ? 1 : row.failures + 1;
    await trx
      .updateTable('auth_throttle')
      .set({
        failures: failures >= policy.maxFailures ? 0 : failures,
        window_started_at: fresh || failures >= policy.maxFailures ? now : row.window_started_at,
        locked_until: failures >= policy.maxFailures ? now + policy.lockMs : row.locked_until,
      })
      .where('key', '=', key)
      .execute();
  });
}

/** Clears a key's failures after a success. */
export async function clearFailures(deps: Deps, key: string): Promise<void> {
  await deps.db.deleteFrom('auth_throttle').where('key', '=', key).execute();
}


function lockRow(trx: Transaction<DB>, dialect: Deps['dialect'], key: string) {
  const q = trx.selectFrom('auth_throttle').selectAll().where('key', '=', key);
  return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
}

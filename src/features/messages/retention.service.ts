// Retention: how long messages and their delivery records are kept. Pruning never removes a message that
// still has a pending delivery; it waits until the worker has delivered or dead-lettered it.
import type { Deps } from '../../deps.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import { deleteMessages, findPrunableMessageIds, findRetentionDays, saveRetentionDays } from './retention.repo.ts';

/** Kept this long unless an administrator turns the dial. */
export const DEFAULT_RETENTION_DAYS = 90;
/** The dial's range: at least a day, at most ten years. */
export const RETENTION_MIN_DAYS = 1;
export const RETENTION_MAX_DAYS = 3650;
/** Messages removed per delete statement, so a large prune never holds the write lock for long. */
const PRUNE_BATCH = 500;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The retention in force, in days. */
export async function retentionDays(deps: Deps): Promise<number> {
  return (await findRetentionDays(deps.db)) ?? DEFAULT_RETENTION_DAYS;
}

export type SetRetentionResult = { ok: true } | { ok: false; reason: 'out-of-range' | 'not-admin' };

/** Turns the dial, an administrator's act; anything but a whole number in range is refused. */
export async function setRetentionDays(deps: Deps, actor: AdminActor, days: number): Promise<SetRetentionResult> {
  if (!(await actorIsAdmin(deps, actor))) return { ok: false, reason: 'not-admin' };
  if (!Number.isInteger(days) || days < RETENTION_MIN_DAYS || days > RETENTION_MAX_DAYS)
    return { ok: false, reason: 'out-of-range' };
  await saveRetentionDays(deps.db, days);
  return { ok: true };
}

/**
 * Removes messages (with their deliveries and their attempts) older than the retention, except any with a pending
 * delivery. Returns how many.
 */
export async function pruneMessages(deps: Deps): Promise<number> {
  const cutoff = deps.clock.now() - (await retentionDays(deps)) * DAY_MS;
  let removed = 0;
  for (;;) {
    const ids = await findPrunableMessageIds(deps.db, cutoff, PRUNE_BATCH);
    if (ids.length === 0) return removed;
    const deleted = await deleteMessages(deps.db, ids);
    removed += deleted;
    if (ids.length < PRUNE_BATCH || deleted === 0) return removed;
  }
}

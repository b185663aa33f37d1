// Readiness: the database answers and every migration this build knows is applied. Checked afresh on every call (one
// trivial query and one read of the migration table), so nothing cached can hide an outage.
import { setTimeout as sleep } from 'node:timers/promises';
import { migrations } from '../../db/migrate.ts';
import type { Deps } from '../../deps.ts';
import { appliedMigrationNames, ping } from './ops.repo.ts';

/** Ready, or why not in words an operator can act on. */
export type Readiness = { ready: true } | { ready: false; reason: string };

/** How long the database may take to answer before the instance counts as not ready (ms). */
const ANSWER_WITHIN_MS = 2_000;

/** Checks the database and the schema; never throws. */
export async function checkReadiness(deps: Pick<Deps, 'db'>): Promise<Readiness> {
  const answered = await withinTime(ping(deps.db));
  if (answered !== 'ok')
    return {
      ready: false,
      reason:
        answered === 'late'
          ? `the database did not answer within ${ANSWER_WITHIN_MS / 1000} s`
          : 'the database cannot be reached',
    };
  let applied: string[];
  try {
    applied = await appliedMigrationNames(deps.db);
  } catch {
    return {
      ready: false,
      reason: 'the database has no schema yet (start-up or `svc migrate` applies the migrations)',
    };
  }
  const have = new Set(applied);
  const missing = Object.keys(migrations).filter((name) => !have.has(name));
  if (missing.length > 0) {
    return {
      ready: false,
      reason: `the database schema is behind this version: ${missing.length} migration(s) not applied (${missing.join(', ')}); start-up or \`svc migrate\` applies them`,
    };
  }
  return { ready: true };
}

/**
 * 'ok' when `work` settles successfully within ANSWER_WITHIN_MS, 'late' when it takes longer, 'failed' when it rejects.
 */
async function withinTime(work: Promise<void>): Promise<'ok' | 'late' | 'failed'> {
  const timer = new AbortController();
  const outcome = work.then(
    () => 'ok' as const,
    () => 'failed' as const,
  );
  const late = sleep(ANSWER_WITHIN_MS, 'late' as const, { signal: timer.signal }).catch(() => 'late' as const);
  try {
    return await Promise.race([outcome, late]);
  } finally {
    timer.abort();
  }
}

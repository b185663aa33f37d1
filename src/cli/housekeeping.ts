// Periodic clean-up inside `svc serve`: expired sessions and stale throttle counters. Safe on every instance.
import type { Deps } from '../deps.ts';
import { pruneSessions } from '../features/auth/sessions.service.ts';
import { pruneThrottles } from '../features/auth/throttle.service.ts';

/** How often housekeeping runs. */
const EVERY_MS = 10 * 60_000;

/** Runs every housekeeping task once; failures are logged and retried next round. */
export async function housekeepOnce(deps: Deps): Promise<void> {
  for (const task of [pruneSessions, pruneThrottles]) {
    await task(deps).catch((err: unknown) => deps.log.warn({ err, task: task.name }, 'housekeeping task failed'));
  }
}

/** Starts the timer; returns a function that stops it. */
export function startHousekeeping(deps: Deps): () => void {
  const timer = setInterval(() => void housekeepOnce(deps), EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

// Periodic clean-up inside `svc serve`: expired sessions, pending enrolments and passkey challenges, stale throttle
// counters, messages past retention, API Idempotency-Keys past their 24 hours, the spent states of expired single
// sign-on flows, and single sign-on's logout leftovers (accepted logout tokens' ids past their age, sign-outs at a
// provider no browser came for).
// Every task is idempotent, so several instances running it against one database is harmless.
import type { Deps } from '../deps.ts';
import { pruneEnrolments } from '../features/second-factor/second-factor.service.ts';
import { pruneChallenges } from '../features/second-factor/passkeys.ceremony.ts';
import { pruneSessions } from '../features/auth/sessions.service.ts';
import { pruneThrottles } from '../features/auth/throttle.service.ts';
import { pruneIdempotencyKeys } from '../features/messages/idempotency.service.ts';
import { pruneMessages } from '../features/messages/retention.service.ts';
import { pruneSpentStates } from '../features/sso/sso.flow.service.ts';
import { pruneLogoutJtis } from '../features/sso/sso.backchannel.service.ts';
import { pruneSignOuts } from '../features/sso/sso.logout.service.ts';

/** How often housekeeping runs. */
const EVERY_MS = 10 * 60_000;

/** Runs every housekeeping task once; failures are logged and retried next round. */
export async function housekeepOnce(deps: Deps): Promise<void> {
  const tasks: ((deps: Deps) => Promise<unknown>)[] = [
    pruneSessions,
    pruneEnrolments,
    pruneChallenges,
    pruneThrottles,
    pruneMessages,
    pruneIdempotencyKeys,
    pruneSpentStates,
    pruneLogoutJtis,
    pruneSignOuts,
  ];
  for (const task of tasks) {
    await task(deps).catch((err: unknown) => deps.log.warn({ err, task: task.name }, 'housekeeping task failed'));
  }
}

/** Starts the timer; returns a function that stops it. */
export function startHousekeeping(deps: Deps): () => void {
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= housekeepOnce(deps).finally(() => (running = undefined));
  };
  const first = setTimeout(tick, 60_000);
  const timer = setInterval(tick, EVERY_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}

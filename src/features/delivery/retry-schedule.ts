// The retry budget: five attempts over roughly one hour, then dead-lettered. Fixed in code on purpose.
import type { Random } from '../../deps.ts';

/** Attempts a delivery gets before it is dead-lettered. */
export const MAX_ATTEMPTS = 5;

/**
 * Wait after failed attempt n (index n-1) before attempt n+1: +1, +5, +15 and +40 minutes,
 * so the five attempts span about an hour (61 to 67 minutes with jitter).
 */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 15 * 60_000, 40 * 60_000] as const;

/** Jitter stretches each wait by up to this fraction, so many deliveries failing together do not retry in lockstep. */
export const JITTER_FRACTION = 0.1;

/** What follows a failed attempt: another attempt at a time, or dead-lettering. */
export type AfterFailure = { state: 'pending'; nextAttemptAt: number } | { state: 'dead' };

/** Schedules the next attempt after failed attempt number `attemptNo` (1-based) finished at `finishedAt`. */
export function afterFailure(attemptNo: number, finishedAt: number, random: Random): AfterFailure {
  if (attemptNo >= MAX_ATTEMPTS) return { state: 'dead' };
  const base = RETRY_DELAYS_MS[attemptNo - 1]!;
  const unit = random.bytes(4).readUInt32BE(0) / 0x1_0000_0000;
  return { state: 'pending', nextAttemptAt: finishedAt + Math.round(base * (1 + JITTER_FRACTION * unit)) };
}

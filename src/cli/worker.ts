// svc worker: the delivery worker alone (any number may run against one database), stopped gracefully on a signal.
import os from 'node:os';
import type { Deps } from '../deps.ts';
import { createDeliveryWorker } from '../features/delivery/delivery.worker.ts';
import { wireWakeups } from '../features/delivery/wakeup.listener.ts';

/** Resolves on the first SIGINT or SIGTERM; a second one (an impatient operator) exits at once, non-zero. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      const now = (again: NodeJS.Signals) => {
        process.stderr.write(`svc: ${again} received while stopping; exiting now without finishing\n`);
        process.exit(128 + os.constants.signals[again]);
      };
      process.once('SIGINT', now);
      process.once('SIGTERM', now);
      resolve(signal);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * Runs the delivery loop until asked to stop; in-flight attempts get their time budget to finish, the rest are freed
 * for another worker.
 */
export async function runWorker(deps: Deps): Promise<void> {
  const stopped = untilSignal();
  const worker = createDeliveryWorker(deps);
  const stopWakeups = wireWakeups(deps, worker);
  worker.start();
  deps.log.info({ worker: worker.id, database: deps.dialect }, 'delivery worker started');
  await stopped;
  deps.log.info({ worker: worker.id }, 'delivery worker stopping');
  await Promise.all([stopWakeups(), worker.stop()]);
  await deps.db.destroy();
}

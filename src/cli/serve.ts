// svc serve: the web service (and, unless --no-worker, the delivery worker) in one process.
import { serve } from '@hono/node-server';
import { createApp } from '../app.ts';
import type { Deps } from '../deps.ts';
import { createDeliveryWorker } from '../features/delivery/delivery.worker.ts';
import { wireWakeups } from '../features/delivery/wakeup.listener.ts';
import { prepareSetupToken } from '../features/setup/setup.service.ts';
import { untilSignal } from './worker.ts';
import { startHousekeeping } from './housekeeping.ts';

/** Starts listening; resolves when the process is asked to stop and has closed cleanly. */
export async function runServe(deps: Deps, options: { worker: boolean }): Promise<void> {
  // Listen for the stop signal first, so a SIGTERM during start-up still shuts down cleanly.
  const stopped = untilSignal();
  const app = createApp(deps);
  const server = serve({ fetch: app.fetch, port: deps.config.port, hostname: deps.config.host });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.config.port;
  const base = deps.config.externalUrl ?? `http://localhost:${port}`;
  deps.log.info({ port, database: deps.dialect, worker: options.worker }, `svc listening on ${base}`);

  const token = await prepareSetupToken(deps);
  if (token) deps.log.info({ setupLink: `${base}/setup?token=${encodeURIComponent(token)}` }, `setup: open ${base}/setup?token=${encodeURIComponent(token)}`);

  const stopHousekeeping = startHousekeeping(deps);
  // The worker runs in this process; a dead channel cannot slow the web tier (SPEC 6.4).
  const worker = options.worker ? createDeliveryWorker(deps) : undefined;
  const stopWakeups = worker ? wireWakeups(deps, worker) : undefined;
  worker?.start();

  await stopped;
  deps.log.info('shutting down');
  stopHousekeeping();
  await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), stopWakeups?.(), worker?.stop()]);
  await deps.db.destroy();
}

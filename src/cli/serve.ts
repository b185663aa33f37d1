// svc serve: the web service (and, unless --no-worker, the delivery worker) in one process.
import type http from 'node:http';
import { serve } from '@hono/node-server';
import { createApp } from '../app.ts';
import { linkBase } from '../link-base.ts';
import type { Deps } from '../deps.ts';
import { createDeliveryWorker } from '../features/delivery/delivery.worker.ts';
import { wireWakeups } from '../features/delivery/wakeup.listener.ts';
import { prepareSetupToken } from '../features/setup/setup.service.ts';
import { untilSignal } from './worker.ts';
import { startHousekeeping } from './housekeeping.ts';

/** How long requests in flight at a stop signal may take to finish before their connections are closed (ms). */
const REQUEST_GRACE_MS = 10_000;

/** Starts listening; resolves when the process is asked to stop and has closed cleanly. */
export async function runServe(deps: Deps, options: { worker: boolean }): Promise<void> {
  // Listen for the stop signal first, so a SIGTERM during start-up still shuts down cleanly.
  const stopped = untilSignal();
  const app = createApp(deps);
  const server = serve({ fetch: app.fetch, port: deps.config.port, hostname: deps.config.host });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.config.port;
  const base = linkBase(deps.config, port);
  deps.log.info({ port, database: deps.dialect, worker: options.worker }, `svc listening on ${base}`);

  const token = await prepareSetupToken(deps);
  if (token)
    deps.log.info(
      { setupLink: `${base}/setup?token=${encodeURIComponent(token)}` },
      `setup: open ${base}/setup?token=${encodeURIComponent(token)}`,
    );

  const stopHousekeeping = startHousekeeping(deps);
  // The worker runs in this process; a dead channel cannot slow the web tier.
  const worker = options.worker ? createDeliveryWorker(deps) : undefined;
  const stopWakeups = worker ? wireWakeups(deps, worker) : undefined;
  worker?.start();

  await stopped;
  // Listening stops before the line is logged, so whoever reads "shutting down" finds new connections refused.
  const closing = closeServer(server as http.Server, REQUEST_GRACE_MS);
  deps.log.info(
    'shutting down: no new connections; requests in flight get 10 s, deliveries in flight their time budget',
  );
  stopHousekeeping();
  await Promise.all([closing, stopWakeups?.(), worker?.stop()]);
  await deps.db.destroy();
  deps.log.info('stopped');
}

/**
 * Stops accepting connections at once, lets the requests in flight finish for up to `graceMs`, then closes the
 * connections still open. A keep-alive connection would hold close() open after its response, so each one is closed as
 * soon as it falls idle.
 */
export function closeServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    });
  });
}

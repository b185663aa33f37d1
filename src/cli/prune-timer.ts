// Runs the message retention prune on a timer inside `svc serve`. The prune itself (retention.service.ts) is
// idempotent, so several instances pruning the same database is harmless.
import type { Deps } from '../deps.ts';
import { pruneMessages } from '../features/messages/retention.service.ts';

/** How often the prune runs. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** First run shortly after start-up, off the start-up path. */
const FIRST_PRUNE_AFTER_MS = 60 * 1000;

/** Starts pruning on a timer; returns a function that stops it. */
export function startPruneTimer(deps: Deps): () => void {
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      const removed = await pruneMessages(deps);
      if (removed > 0) deps.log.info({ removed }, 'pruned messages past their retention');
    } catch (err) {
      deps.log.error({ err }, 'message prune failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(run, FIRST_PRUNE_AFTER_MS);
  const every = setInterval(run, PRUNE_EVERY_MS);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}

// The delivery store thread: one SQLite connection of its own, running one worker's recording and claiming
// transactions in the order they are asked for (see delivery.store.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../db/connect.ts';
import { recordAndClaimSqlite } from './delivery.service.ts';
import type { StoreReply, StoreRequest } from './delivery.store.ts';

const port = parentPort!;
const { db } = openDatabase({ kind: 'sqlite', path: (workerData as { path: string }).path }, { reader: false });
// One at a time, in order: each request's transaction is synchronous on this thread anyway, and the next claim must
// see the previous one's leases.
let queue: Promise<void> = Promise.resolve();
port.postMessage({ ready: true } satisfies StoreReply);

port.on('message', (request: StoreRequest) => {
  // serve() answers its own failures; the catch only keeps one unexpected throw from stopping the chain for good.
  queue = queue.then(() => serve(request)).catch(() => undefined);
});

async function serve(request: StoreRequest): Promise<void> {
  if ('close' in request) {
    await db.destroy();
    port.close(); // nothing else keeps the thread alive: it exits
    return;
  }
  let reply: StoreReply;
  try {
    reply = { id: request.id, result: await recordAndClaimSqlite(db, request.records, request.owner, request.finishedAt, request.claim) };
  } catch (err) {
    const e = err as { message?: unknown; code?: unknown };
    reply = { id: request.id, error: { message: String(e?.message ?? err), code: typeof e?.code === 'string' ? e.code : undefined } };
  }
  port.postMessage(reply);
}

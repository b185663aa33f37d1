// Delivery worker throughput, each figure beside a baseline measured in the same run, on SQLite (and PostgreSQL when
// TEST_DATABASE_URL is set). The receiver runs in its own process; the worker and the baselines run here.
//   throughput  deliveries/s (8 channels, concurrency 32) beside a raw undici POST loop at the same concurrency
//   fan-out     one message to 10,000 channels: emit() until committed, then until all are delivered
// Messages enter through the real emit(), as in production.
import { sql } from 'kysely';
import { Pool, request } from 'undici';
import type { Deps } from '../src/deps.ts';
import { createDeliveryWorker } from '../src/features/delivery/delivery.worker.ts';
import { CLI_ACTOR } from '../src/features/auth/admin-actor.ts';
import { emit } from '../src/features/messages/emit.service.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { allowTestLoopback } from '../test/helpers/delivery.ts';
import { buildChannel, clearOutbox } from '../test/helpers/outbox.ts';
import { benchDeps, report, startReceiver } from './helpers.ts';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1000);
const CHANNELS = 8;
const CONCURRENCY = 32;
const FANOUT_CHANNELS = 10_000;
const outbound = { policy: allowTestLoopback };

/**
 * POSTs `total` bodies over `concurrency` parallel loops through one keep-alive pool: the raw baseline, in per second.
 */
async function rawLoop(url: string, body: string, total: number, concurrency: number): Promise<number> {
  const pool = new Pool(new URL(url).origin, { connections: null });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const res = await request(url, {
          dispatcher: pool,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`raw POST got ${res.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return total / seconds;
}

async function emitOne(deps: Deps): Promise<string> {
  const result = await emit(deps, CLI_ACTOR, {
    cause: 'drift',
    subject: { kind: 'host', key: 'web-1.example.net' },
    instant: Date.now(),
    headline: 'Port 22 opened on web-1.',
    census: 1,
  });
  if (!result.ok) throw new Error(`emit refused: ${JSON.stringify(result)}`);
  return result.id;
}

/** Fails the bench unless every delivery so far was delivered at its first attempt. */
async function checkAllDeliveredFirstTime(deps: Deps, expected: number): Promise<void> {
  const delivered = await deps.db
    .selectFrom('deliveries')
    .select('id')
    .where('state', '=', 'delivered')
    .where('attempts', '=', 1)
    .execute();
  if (delivered.length !== expected)
    throw new Error(`${delivered.length} of ${expected} deliveries were delivered at the first attempt`);
}

async function throughput(deps: Deps, rx: string): Promise<void> {
  await clearOutbox(deps.db);
  for (let i = 0; i < CHANNELS; i++) await buildChannel(deps.db, { url: `${rx}/t${i}`, secret: 'bench-secret' });
  const worker = createDeliveryWorker(deps, { concurrency: CONCURRENCY, outbound });
  for (let i = 0; i < 50; i++) await emitOne(deps); // warm-up: JIT, pools
  await worker.drain();
  for (let i = 0; i < MESSAGES; i++) await emitOne(deps);
  if (deps.dialect === 'postgres') await sql`analyze deliveries`.execute(deps.db);
  const total = MESSAGES * CHANNELS;
  const body = (await deps.db.selectFrom('messages').select('body').executeTakeFirstOrThrow()).body;
  await rawLoop(`${rx}/raw`, body, 2000, CONCURRENCY); // warm-up
  const raw = await rawLoop(`${rx}/raw`, body, total, CONCURRENCY);
  const started = performance.now();
  await worker.drain();
  const ours = total / ((performance.now() - started) / 1000);
  await worker.stop();
  await checkAllDeliveredFirstTime(deps, total + 50 * CHANNELS);
  console.log(`  throughput: ${total} signed deliveries over ${CHANNELS} channels at concurrency ${CONCURRENCY}`);
  report('deliveries/s', ours, '/s', { value: raw, label: 'raw undici POST loop' }, { min: 2000 });
}

async function fanout(deps: Deps, rx: string): Promise<void> {
  await clearOutbox(deps.db);
  for (let i = 0; i < FANOUT_CHANNELS; i++) await buildChannel(deps.db, { url: `${rx}/f/${i}` });
  const started = performance.now();
  const messageId = await emitOne(deps);
  const committed = performance.now() - started;
  const body = (
    await deps.db.selectFrom('messages').select('body').where('id', '=', messageId).executeTakeFirstOrThrow()
  ).body;
  const worker = createDeliveryWorker(deps, { concurrency: CONCURRENCY, outbound });
  const sendStart = performance.now();
  await worker.drain();
  const allDelivered = performance.now() - sendStart;
  await worker.stop();
  await checkAllDeliveredFirstTime(deps, FANOUT_CHANNELS);
  const raw = await rawLoop(`${rx}/raw`, body, FANOUT_CHANNELS, CONCURRENCY);
  console.log(`  fan-out: one message to ${FANOUT_CHANNELS} channels, through emit()`);
  report(`emit() until committed (${FANOUT_CHANNELS} deliveries)`, committed, 'ms', undefined, { max: 500 });
  report('until all delivered', allDelivered / 1000, 's', {
    value: FANOUT_CHANNELS / raw,
    label: 'raw undici POST loop',
  });
}

const rx = await startReceiver();
try {
  for (const kind of process.env.TEST_DATABASE_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
    const tdb = await createTestDatabase(kind);
    const deps = benchDeps(tdb);
    console.log(`-- ${kind}`);
    try {
      await throughput(deps, rx.url);
      await fanout(deps, rx.url);
    } finally {
      await tdb.drop();
    }
  }
} finally {
  rx.close();
}

// Emit -> first attempt at the receiver, p50 and p95, at 200 messages/s, beside the raw undici POST round trip to the
// same receiver. The worker runs here and is wired to wake-ups exactly as `svc serve` wires it (wireWakeups: this
// process's wake-up line, and on PostgreSQL the LISTEN session). Cases:
//   in this process     emit() here, SQLite and PostgreSQL (when TEST_DATABASE_URL is set)
//   in another process  PostgreSQL: emit() at the same rate in a second process without a worker; NOTIFY wakes ours
//   svc emit            PostgreSQL: `svc emit` processes one after another, as a script or a cron job runs them (a
//                       process costs far more than 5 ms, so 200/s is out of reach; two at once would measure two
//                       Node start-ups starving the worker of both cores); their spawn-to-exit time is reported apart
// A message's time is its created_at (taken by emit() just before its transaction, so the figure includes the commit;
// whole milliseconds, so it reads up to 1 ms high); its arrival is when the receiver got the request's headers.
import { fork, type ChildProcess } from 'node:child_process';
import { Pool, request } from 'undici';
import type { Deps } from '../src/deps.ts';
import { createDeliveryWorker } from '../src/features/delivery/delivery.worker.ts';
import { wireWakeups } from '../src/features/delivery/wakeup.listener.ts';
import { CLI_ACTOR } from '../src/features/auth/admin-actor.ts';
import { emit } from '../src/features/messages/emit.service.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { allowTestLoopback } from '../test/helpers/delivery.ts';
import { buildChannel } from '../test/helpers/outbox.ts';
import {
  ascending,
  benchDeps,
  killOnExit,
  percentile,
  report,
  spawnSvc,
  startReceiver,
  until,
  type BenchReceiver,
} from './helpers.ts';

const RATE = 200;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const BUDGET = { p50: 5, p95: 20 };

type Figures = { p50: number; p95: number; count: number };

/** Prints a case's p50 and p95 beside the raw round trip's and the budget. */
function printCase(title: string, f: Figures, raw: Figures): void {
  console.log(`-- ${title} (${f.count} messages)`);
  report('emit -> first attempt p50', f.p50, 'ms', { value: raw.p50, label: 'raw POST p50' }, { max: BUDGET.p50 });
  report('emit -> first attempt p95', f.p95, 'ms', { value: raw.p95, label: 'raw POST p95' }, { max: BUDGET.p95 });
}

function figures(latencies: number[]): Figures {
  const sorted = ascending(latencies);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), count: sorted.length };
}

/**
 * The baseline: one POST at a time at RATE per second through a keep-alive pool, timed from send to the whole answer.
 */
async function rawRoundTrip(url: string): Promise<Figures> {
  const pool = new Pool(new URL(url).origin);
  const body = JSON.stringify({ message: 'raw', headline: 'x'.repeat(200) });
  const times: number[] = [];
  const start = performance.now();
  for (let i = 0; i < RATE * SECONDS; i++) {
    await until(start + (i * 1000) / RATE);
    const t0 = performance.now();
    const res = await request(`${url}/raw`, {
      dispatcher: pool,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    await res.body.text();
    times.push(performance.now() - t0);
  }
  await pool.close();
  return figures(times);
}

async function emitOne(deps: Deps): Promise<void> {
  const result = await emit(deps, CLI_ACTOR, {
    cause: 'drift',
    subject: { kind: 'host', key: 'web-1.example.net' },
    instant: Date.now(),
    headline: 'Port 22 opened on web-1.',
    census: 1,
  });
  if (!result.ok) throw new Error(`emit refused: ${JSON.stringify(result)}`);
}

/**
 * Waits until the receiver has seen `expected` messages (or 30 s), then returns arrival - created_at per message;
 * `seen` receives each message's arrival time.
 */
async function collect(
  deps: Deps,
  rx: BenchReceiver,
  expected: number,
  seen = new Map<string, number>(),
): Promise<number[]> {
  const deadline = performance.now() + 30_000;
  while (seen.size < expected && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    for (const [id, at] of await rx.arrivals()) seen.set(id, at);
  }
  if (seen.size < expected)
    throw new Error(`only ${seen.size} of ${expected} messages reached the receiver within 30 s`);
  const messages = await deps.db.selectFrom('messages').select(['id', 'created_at']).execute();
  return messages.filter((m) => seen.has(m.id)).map((m) => seen.get(m.id)! - m.created_at);
}

async function inProcess(deps: Deps, rx: BenchReceiver): Promise<Figures> {
  for (let i = 0; i < 50; i++) await emitOne(deps); // warm-up: JIT, pools
  await collect(deps, rx, 50);
  await clearMessages(deps);
  const start = performance.now();
  const total = RATE * SECONDS;
  for (let i = 0; i < total; i++) {
    await until(start + (i * 1000) / RATE);
    await emitOne(deps);
  }
  return figures(await collect(deps, rx, total));
}

/** Runs emit() at RATE for SECONDS in a second process (bench/servers/emitter.ts); resolves with how many it stored. */
function otherProcess(url: string): Promise<number> {
  const child = fork(new URL('./servers/emitter.ts', import.meta.url).pathname, [url, String(RATE), String(SECONDS)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  killOnExit(child);
  return new Promise((resolve, reject) => {
    child.once('message', (m: { count: number }) => resolve(m.count));
    child.once('exit', (code) => code !== 0 && reject(new Error(`the emitter exited with ${code}`)));
  });
}

async function clearMessages(deps: Deps): Promise<void> {
  await deps.db.deleteFrom('delivery_attempts').execute();
  await deps.db.deleteFrom('deliveries').execute();
  await deps.db.deleteFrom('messages').execute();
}

/**
 * Runs `svc emit` processes one after another for 3 x SECONDS (about 4 a second); returns their wall times (spawn to
 * exit) and, per message id, when its id arrived on stdout (epoch ms; just after the commit).
 */
async function svcEmits(url: string): Promise<{ walls: number[]; printed: Map<string, number> }> {
  const walls: number[] = [];
  const printed = new Map<string, number>();
  const end = performance.now() + 3 * SECONDS * 1000;
  const one = async () => {
    const t0 = performance.now();
    const child: ChildProcess = spawnSvc(
      [
        'emit',
        '--cause',
        'drift',
        '--subject-kind',
        'host',
        '--subject-key',
        'web-1.example.net',
        '--headline',
        'Port 22 opened on web-1.',
      ],
      { DATABASE_URL: url, SVC_LOG_LEVEL: 'warn' },
    );
    let err = '';
    child.stderr!.on('data', (c) => (err += c));
    child.stdout!.on('data', (c: Buffer) =>
      printed.set(c.toString().trim(), performance.timeOrigin + performance.now()),
    );
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`svc emit exited with ${code}: ${err}`);
    walls.push(performance.now() - t0);
  };
  while (performance.now() < end) await one();
  return { walls, printed };
}

async function main(): Promise<void> {
  const rx = await startReceiver();
  try {
    await rawRoundTrip(rx.url); // warm-up
    const raw = await rawRoundTrip(rx.url);
    console.log(
      `emit -> first attempt at the receiver, ${RATE} messages/s for ${SECONDS} s, one channel; baseline: raw undici POST round trip at the same rate`,
    );
    console.log(
      `  (from the message's created_at, taken by emit() before its transaction, to the receiver getting the request)`,
    );
    const kinds = process.env.TEST_DATABASE_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
    if (!process.env.TEST_DATABASE_URL)
      console.log('  (set TEST_DATABASE_URL to add PostgreSQL and the `svc emit` case)');
    for (const kind of kinds) {
      const tdb = await createTestDatabase(kind);
      const deps = benchDeps(tdb);
      try {
        await buildChannel(deps.db, { url: `${rx.url}/lat`, secret: 'bench-secret' });
        const worker = createDeliveryWorker(deps, { outbound: { policy: allowTestLoopback } });
        const stopWakeups = wireWakeups(deps, worker);
        worker.start();
        await new Promise((r) => setTimeout(r, 500)); // the PostgreSQL listener connects
        printCase(`${kind}, emit() in this process`, await inProcess(deps, rx), raw);
        if (kind === 'postgres') {
          const url = (tdb.database as { url: string }).url;
          await clearMessages(deps);
          printCase(
            'postgres, emit() in another process at the same rate',
            figures(await collect(deps, rx, await otherProcess(url))),
            raw,
          );
          await clearMessages(deps);
          const { walls, printed } = await svcEmits(url);
          const seen = new Map<string, number>();
          const rate = (walls.length / (3 * SECONDS)).toFixed(0);
          printCase(
            `postgres, \`svc emit\` processes one after another (${rate}/s)`,
            figures(await collect(deps, rx, walls.length, seen)),
            raw,
          );
          // created_at is taken before the fresh process's first (cold) transaction; its printed id comes just after
          // the commit.
          const afterPrint = figures([...printed].filter(([id]) => seen.has(id)).map(([id, at]) => seen.get(id)! - at));
          report('  the same from the id on stdout, p50', afterPrint.p50, 'ms');
          report('  the same from the id on stdout, p95', afterPrint.p95, 'ms');
          report('svc emit process, spawn to exit, p50', figures(walls).p50, 'ms');
        }
        await Promise.all([stopWakeups(), worker.stop()]);
      } finally {
        await tdb.drop();
      }
    }
  } finally {
    rx.close();
  }
}

await main();

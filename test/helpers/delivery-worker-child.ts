// A delivery worker in its own process, for crash tests: opens the test database named in the environment.
//   SVC_TEST_DATABASE      JSON of the config's database block (TestDatabase.database)
//   SVC_TEST_CLOCK_OFFSET  milliseconds added to the real clock (lets a restarted worker see expired leases without
// waiting)
//   SVC_TEST_MODE          "run": loop until SIGTERM (graceful) or SIGKILL; "drain": deliver everything due, then exit
// 0
//   SVC_TEST_WAIT_FOR_GO   "1": in run mode, print "ready" and start only once a line arrives on stdin
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase } from '../../src/db/connect.ts';
import { systemRandom, type Deps } from '../../src/deps.ts';
import { createDeliveryWorker } from '../../src/features/delivery/delivery.worker.ts';
import { createDeliveryWakeup } from '../../src/features/delivery/wakeup.ts';

// The lease delivery.concurrency.test.ts expects (its CHILD_LEASE_MS).
const CHILD_LEASE_MS = 60_000;

const database = JSON.parse(process.env.SVC_TEST_DATABASE!) as Config['database'];
const offset = Number(process.env.SVC_TEST_CLOCK_OFFSET ?? 0);
const { db, dialect } = await openDatabase(database);
const loaded = loadConfig({
  DATABASE_URL: database.kind === 'sqlite' ? database.path : database.url,
  SVC_LOG_LEVEL: 'silent',
});
if (!loaded.ok) throw new Error(loaded.errors.join('; '));
const config = loaded.config;
const deps: Deps = {
  db,
  dialect,
  config,
  clock: { now: () => Date.now() + offset },
  random: systemRandom,
  log: pino({ level: 'silent' }),
  wakeup: createDeliveryWakeup(),
};
const worker = createDeliveryWorker(deps, {
  concurrency: 8,
  perChannel: 4,
  pollMs: 10,
  leaseMs: CHILD_LEASE_MS,
  outbound: { timeoutMs: 60_000 },
});

if (process.env.SVC_TEST_MODE === 'drain') {
  await worker.drain();
  await worker.stop();
  await db.destroy();
  process.stdout.write('drained\n');
} else {
  process.once('SIGTERM', async () => {
    await worker.stop();
    await db.destroy();
    process.stdout.write(`recorded ${worker.recorded}\n`, () => process.exit(0));
  });
  // Optionally hold until the parent writes "go", so several children start claiming together.
  if (process.env.SVC_TEST_WAIT_FOR_GO === '1') {
    process.stdout.write('ready\n');
    await new Promise((resolve) => process.stdin.once('data', resolve));
    process.stdin.pause();
  }
  worker.start();
  process.stdout.write('started\n');
}

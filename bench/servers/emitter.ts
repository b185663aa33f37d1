// A second process for the latency bench: emit() at RATE messages/s for SECONDS into the PostgreSQL database at
// argv[2], with no worker of its own, so only NOTIFY can wake the bench's worker at once. Reports { count } over IPC
// when done.
import pino from 'pino';
import { testConfig } from '../../test/helpers/app.ts';
import { openDatabase } from '../../src/db/connect.ts';
import { systemClock, systemRandom, type Deps } from '../../src/deps.ts';
import { createDeliveryWakeup } from '../../src/features/delivery/wakeup.ts';
import { CLI_ACTOR } from '../../src/features/auth/admin-actor.ts';
import { emit } from '../../src/features/messages/emit.service.ts';
import { until } from '../helpers.ts';

const [url, rate, seconds] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const database = { kind: 'postgres', url } as const;
const { db, dialect } = await openDatabase(database);
const config = testConfig({ db, dialect, database, drop: async () => {} }, { logLevel: 'silent' });
const deps: Deps = {
  db,
  dialect,
  config,
  clock: systemClock,
  random: systemRandom,
  log: pino({ level: 'silent' }),
  wakeup: createDeliveryWakeup(),
};

const total = rate * seconds;
const start = performance.now();
for (let i = 0; i < total; i++) {
  await until(start + (i * 1000) / rate);
  const result = await emit(deps, CLI_ACTOR, {
    cause: 'drift',
    subject: { kind: 'host', key: 'web-1.example.net' },
    instant: Date.now(),
    headline: 'Port 22 opened on web-1.',
    census: 1,
  });
  if (!result.ok) throw new Error(`emit refused: ${JSON.stringify(result)}`);
}
await db.destroy();
process.send!({ count: total });

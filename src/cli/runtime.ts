// Start-up shared by every command: config, logger, database and migrations, or a clear exit.
import pino from 'pino';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { systemClock, systemRandom, type Deps } from '../deps.ts';
import { createDeliveryWakeup } from '../features/delivery/wakeup.ts';

/** Loads config and opens a migrated database; prints every problem and exits non-zero on failure. */
export async function startRuntime(options: { logToStderr?: boolean } = {}): Promise<Deps> {
  const loaded = loadConfig();
  if (!loaded.ok) {
    process.stderr.write(`svc: invalid configuration:\n${loaded.errors.map((e) => `  - ${e}`).join('\n')}\n`);
    process.exit(2);
  }
  const config = loaded.config;
  const logOptions = { level: config.logLevel, base: undefined };
  // Commands whose stdout is their answer (svc emit) log to stderr.
  const log = options.logToStderr ? pino(logOptions, pino.destination(2)) : pino(logOptions);
  const { db, dialect } = await openDatabase(config.database);
  const migrated = await migrateToLatest(db);
  if (!migrated.ok) {
    log.fatal({ err: migrated.error }, 'database migration failed');
    await db.destroy();
    process.exit(1);
  }
  if (migrated.applied.length > 0) log.info({ applied: migrated.applied, dialect }, 'database migrated');
  const wakeup = createDeliveryWakeup((err) => log.error({ err }, 'a delivery wake-up subscriber failed'));
  return { db, dialect, config, clock: systemClock, random: systemRandom, log, wakeup };
}

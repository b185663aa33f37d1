// Start-up shared by every command: config, logger, database and migrations, or a clear exit.
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { DEFAULT_CONNECT_TIMEOUT_MS, absentSqliteFile, loadConfig, type Config } from '../config.ts';
import { openDatabase, type Dialect } from '../db/connect.ts';
import { isConnectTimeout } from '../db/errors.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { chooseLogFormat, createLogger } from '../log.ts';
import type { DB } from '../db/schema.ts';
import { systemClock, systemRandom, type Deps } from '../deps.ts';
import { createDeliveryWakeup } from '../features/delivery/wakeup.ts';
import { reportInvalidConfiguration } from './start.ts';

/** How a command starts. */
export interface StartOptions {
  /** Commands whose stdout is their answer (svc emit) log to stderr. */
  logToStderr?: boolean;
  /**
   * Creates the SQLite database when it does not exist (svc serve, svc migrate); every other command refuses instead.
   */
  create?: boolean;
}

/**
 * Loads config and opens a migrated database. Every failure is one line on stderr, never a stack trace: invalid
 * configuration exits 2; a missing SQLite file (unless `create`), an unreachable database or a failed migration exit 1.
 */
export async function startRuntime(options: StartOptions = {}): Promise<Deps> {
  const loaded = loadConfig();
  if (!loaded.ok) process.exit(reportInvalidConfiguration(loaded.errors));
  const config = loaded.config;
  const absent = options.create ? undefined : absentSqliteFile(config.database);
  if (absent !== undefined)
    fail(
      `no svc database at ${absent} (DATABASE_URL); run \`svc migrate\` or \`svc serve\` first, or check DATABASE_URL`,
    );
  const fd = options.logToStderr ? 2 : 1;
  const isTerminal = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  const log = createLogger({ level: config.logLevel, format: chooseLogFormat(config.logFormat, isTerminal), fd });
  const where = describeDatabase(config.database);
  const { db, dialect } = await openDatabase(config.database, { create: options.create }).catch((err: unknown) =>
    fail(`cannot open the database (${where}): ${reasonOf(err, config.database)}`),
  );
  // One query before migrating tells "cannot reach" apart from a migration that failed on a reachable database and,
  // on PostgreSQL, whether it holds svc's tables: a database without them (DATABASE_URL naming the wrong one, such as
  // `postgres`) is not migrated by a command that only works on an installation (a missing SQLite file's counterpart).
  const probed = await hasSvcTables(db, dialect).then(
    (found) => ({ found }),
    (err: unknown) => ({ error: reasonOf(err, config.database) }),
  );
  if ('error' in probed) {
    await db.destroy().catch(() => {});
    fail(`cannot reach the database (${where}): ${probed.error}`);
  }
  if (!options.create && !probed.found && config.database.kind === 'postgres') {
    await db.destroy().catch(() => {});
    const name = safeDecode(new URL(config.database.url).pathname.slice(1));
    fail(
      `no svc tables in the database "${name}" (${where}); run \`svc migrate\` or \`svc serve\` first, or check DATABASE_URL`,
    );
  }
  const migrated = await migrateToLatest(db);
  if (!migrated.ok) {
    await db.destroy().catch(() => {});
    fail(`the database migration failed (${where}): ${reasonOf(migrated.error, config.database)}`);
  }
  if (migrated.applied.length > 0) log.info({ applied: migrated.applied, dialect }, 'database migrated');
  const wakeup = createDeliveryWakeup((err) => log.error({ err }, 'a delivery wake-up subscriber failed'));
  return { db, dialect, config, clock: systemClock, random: systemRandom, log, wakeup };
}

/**
 * Whether the database holds svc's migration table (PostgreSQL: in any schema on the search path; SQLite: not asked).
 */
async function hasSvcTables(db: Kysely<DB>, dialect: Dialect): Promise<boolean> {
  if (dialect === 'sqlite') {
    await sql`select 1`.execute(db); // reached; whether the file existed was checked before opening it
    return true;
  }
  const found = await sql<{ found: string | null }>`select to_regclass('kysely_migration')::text as found`.execute(db);
  return found.rows[0]?.found != null;
}

/** One line on stderr and exit 1. */
function fail(line: string): never {
  process.stderr.write(`svc: ${line}\n`);
  process.exit(1);
}

/**
 * Which database, for an error line: "SQLite at /abs/path" or "PostgreSQL at host:port" (never the user or password).
 */
export function describeDatabase(database: Config['database']): string {
  if (database.kind === 'sqlite')
    return `SQLite at ${database.path === ':memory:' ? ':memory:' : path.resolve(database.path)}`;
  const url = new URL(database.url);
  // libpq's forms: a host in the authority, or ?host= (a Unix socket directory); localhost:5432 when neither is given.
  const host = url.hostname || url.searchParams.get('host') || 'localhost';
  const port = url.port || url.searchParams.get('port') || '5432';
  return `PostgreSQL at ${host.startsWith('/') ? host : `${host}:${port}`}`;
}

/** An error's message for one line: no stack, an AggregateError's parts, and any password of the URL masked. */
export function reasonOf(err: unknown, database: Config['database']): string {
  if (database.kind === 'postgres' && isConnectTimeout(err)) {
    const seconds = (database.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) / 1000;
    return `no answer within ${seconds} s (SVC_DATABASE_CONNECT_TIMEOUT)`;
  }
  let reason =
    err instanceof AggregateError && err.errors.length > 0
      ? err.errors.map((e) => reasonOf(e, database)).join('; ')
      : err instanceof Error
        ? err.message
        : String(err);
  if (reason.trim() === '')
    reason = (err as { code?: unknown })?.code ? String((err as { code: unknown }).code) : 'unknown error';
  for (const secret of secretsOf(database)) reason = reason.split(secret).join('***');
  return reason.split('\n')[0]!;
}

/**
 * The password of a postgres:// URL (as written and decoded) and any password-like query parameters, to mask. A
 * password equal to a part the message names anyway (host, port, user, database) is not masked: masking "5432" in
 * "connect ECONNREFUSED 127.0.0.1:5432" would tell the reader the password.
 */
function secretsOf(database: Config['database']): string[] {
  if (database.kind !== 'postgres') return [];
  const url = new URL(database.url);
  const secrets = [url.password, safeDecode(url.password)];
  for (const [name, value] of url.searchParams) if (/password/i.test(name)) secrets.push(value);
  const named = new Set([
    url.hostname,
    url.port || '5432',
    url.username,
    safeDecode(url.username),
    safeDecode(url.pathname.slice(1)),
  ]);
  return secrets.filter((s) => s !== '' && !named.has(s));
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// Opens the database named by the config: SQLite (embedded default) or PostgreSQL.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type SqliteDialectConfig } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.ts';
import { attachReader } from './hot-query.ts';
import type { DB } from './schema.ts';

// int8 columns hold epoch milliseconds, well inside Number's exact range.
pg.types.setTypeParser(20, (v: string) => Number(v));

export type Dialect = 'sqlite' | 'postgres';

/** A Kysely instance plus which dialect it speaks (for the few places that differ, such as locking). */
export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
}

/**
 * Opens the configured database; the caller runs migrations and eventually calls db.destroy(). `reader: false` skips
 * SQLite's read-only connection for page views (a delivery store thread only writes).
 */
export function openDatabase(database: Config['database'], options: { reader?: boolean } = {}): Database {
  if (database.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: database.url, max: 10 });
    // An idle client losing its server (restart, admin termination) must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres' };
  }
  if (database.path !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(database.path)), { recursive: true });
  const file = new SQLite(database.path);
  // busy_timeout before WAL so a second process waits instead of failing.
  file.pragma('busy_timeout = 5000');
  file.pragma('journal_mode = WAL');
  file.pragma('synchronous = NORMAL');
  file.pragma('foreign_keys = ON');
  // Per-request lookups read through a second, read-only connection (see hot-query.ts), opened when Kysely first
  // uses the writer, so db.destroy() always closes it. An in-memory or temporary database exists only inside its
  // one connection, so it has none.
  const openReader = () => {
    if (file.memory || options.reader === false) return undefined;
    const reader = new SQLite(file.name, { readonly: true, fileMustExist: true });
    reader.pragma('busy_timeout = 5000');
    attachReader(db, reader);
    return reader;
  };
  const db: Kysely<DB> = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(file) }, openReader) });
  return { db, dialect: 'sqlite' };
}

/**
 * PostgreSQL: a separate pool of at most `max` connections whose sessions start with `settings` (planner settings for
 * one role's statements, without a SET LOCAL transaction around each). Idle connections never keep the process alive;
 * the caller destroys it.
 */
export function openPostgresSession(url: string, settings: Record<string, string>, max = 1): Kysely<DB> {
  const options = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`).join(' ');
  const pool = new pg.Pool({ connectionString: url, max, options, allowExitOnIdle: true });
  pool.on('error', () => {}); // as in openDatabase
  pool.on('connect', preparedByText);
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Kysely sends every query as an unnamed statement, parsed and planned afresh each time (about 1 ms of the server's
 * CPU for the worker's large statements); named by a digest of its text, a statement is parsed once per connection
 * and its plan may be cached, as a prepared statement.
 */
function preparedByText(client: pg.PoolClient): void {
  const names = new Map<string, string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    if (typeof text !== 'string' || !Array.isArray(values)) return query(text, values, callback);
    let name = names.get(text);
    if (!name) names.set(text, (name = `k${crypto.hash('sha1', text, 'hex')}`));
    return query({ name, text, values }, callback);
  }) as typeof client.query;
}

/** Kysely prepares every query afresh; reusing prepared statements by SQL text halves the cost of hot reads. */
function withStatementCache(file: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = file.prepare.bind(file);
  return new Proxy(file, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') return Reflect.get(target, prop, receiver);
      return (source: string) => {
        let stmt = cache.get(source);
        if (!stmt) {
          if (cache.size >= 1000) cache.clear();
          stmt = prepare(source);
          cache.set(source, stmt);
        }
        return stmt;
      };
    },
  });
}

// SQLite transactions take the write lock up front (BEGIN IMMEDIATE): a read-then-write transaction
// in another process then waits on busy_timeout instead of failing with SQLITE_BUSY on upgrade.
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #openReader: () => SQLite.Database | undefined;
  #reader: SQLite.Database | undefined;
  constructor(config: SqliteDialectConfig, openReader: () => SQLite.Database | undefined) {
    super(config);
    this.#openReader = openReader;
  }
  override async init(): Promise<void> {
    await super.init();
    this.#reader = this.#openReader();
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  /** Closes the read connection with the writer (db.destroy()). */
  override async destroy(): Promise<void> {
    this.#reader?.close();
    this.#reader = undefined;
    await super.destroy();
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #openReader: () => SQLite.Database | undefined;
  constructor(config: SqliteDialectConfig, openReader: () => SQLite.Database | undefined) {
    super(config);
    this.#config = config;
    this.#openReader = openReader;
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config, this.#openReader);
  }
  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }
}

// SQLite DDL is transactional: migrations then run inside one immediate transaction, which is what
// serialises several processes migrating the same file at once (Kysely's SQLite migration lock is a no-op).
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

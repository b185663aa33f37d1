// Opens the database named by the config: SQLite (embedded default) or PostgreSQL.
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_QUERY_TIMEOUT_MS, type Config } from '../config.ts';
import { isQueryTimeout } from './errors.ts';
import { createPrivateFile } from './file-modes.ts';
import type { DB } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

/** A Kysely instance plus which dialect it speaks (for the few places that differ, such as locking). */
export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
}

/**
 * Opens the configured database; the caller runs migrations and eventually calls db.destroy(). PostgreSQL gets a plain
 * pool (no session settings, unnamed statements only), so a transaction-mode pooler such as PgBouncer may sit between.
 * Only the configured database's driver is loaded (pg alone takes ~35 ms to load: start-up time on SQLite).
 * A SQLite file (0600, and its directory 0700) is created unless `create` is false: then a missing file is an error,
 * never made.
 */
export async function openDatabase(
  database: Config['database'],
  options: { create?: boolean } = {},
): Promise<Database> {
  const create = options.create ?? true;
  if (database.kind === 'postgres') {
    const { default: pg } = await import('pg');
    // int8 columns hold epoch milliseconds, well inside Number's exact range.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    const pool = new pg.Pool({
      connectionString: database.url,
      max: 10,
      // A server that accepts the connection and never answers fails the connect (and a wait for a free client)
      // instead of hanging; every query is bounded on the client side (PgBouncer refuses a statement_timeout sent at
      // connect, and a client-side bound also covers a server that stopped answering mid-query).
      connectionTimeoutMillis: database.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      query_timeout: database.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    // A client losing its server (restart, admin termination) must not crash the process, idle or checked out: an
    // 'error' event without a listener is thrown. The idle ones the pool replaces; a checked-out one fails its query,
    // which the caller sees (isDatabaseUnavailable), and is dropped when released.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    return {
      db: new Kysely<DB>({ dialect: new PostgresDialect({ pool: discardingTimedOut(pool) }) }),
      dialect: 'postgres',
    };
  }
  // Folder 0700 and file 0600 before SQLite opens it (its -wal and -shm then take the file's permissions).
  if (create && database.path !== ':memory:') createPrivateFile(database.path);
  const { default: SQLite } = await import('better-sqlite3');
  const file = new SQLite(database.path, { fileMustExist: !create });
  try {
    // busy_timeout before WAL so a second process waits instead of failing.
    file.pragma('busy_timeout = 5000');
    file.pragma('journal_mode = WAL');
    file.pragma('synchronous = NORMAL');
    file.pragma('foreign_keys = ON');
  } catch (err) {
    // Not a database (or unreadable): close the handle before the caller reports it.
    file.close();
    throw err;
  }
  return {
    db: new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(file) }) }),
    dialect: 'sqlite',
  };
}

/**
 * The pool as Kysely sees it, where a client whose query timed out is closed when released, not reused: the query may
 * still be running (or the server gone quiet), and its answer would otherwise wait in front of the next query.
 */
function discardingTimedOut(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      let timedOut: Error | undefined;
      const query = (async (sql: string, parameters: unknown[]) => {
        try {
          return await client.query(sql, parameters);
        } catch (err) {
          if (isQueryTimeout(err)) timedOut = err as Error;
          throw err;
        }
      }) as unknown as PostgresPoolClient['query'];
      return { query, release: () => client.release(timedOut) };
    },
    end: () => pool.end(),
  };
}

/**
 * The file as Kysely sees it, reusing each prepared statement by its SQL text (Kysely prepares every query afresh:
 * about a third of a signed-in page's time, measured). A statement cannot run twice at once, so nothing may stream.
 */
function withStatementCache(file: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => file.close(),
    prepare(sql) {
      let stmt = cache.get(sql);
      if (!stmt) {
        if (cache.size >= 1000) cache.clear();
        stmt = file.prepare(sql);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

// SQLite transactions take the write lock up front (BEGIN IMMEDIATE): a read-then-write transaction
// in another process then waits on busy_timeout instead of failing with SQLITE_BUSY on upgrade.
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config);
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

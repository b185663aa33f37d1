// Per-request queries compiled once: Kysely rebuilds and recompiles a query's tree on every call (tens of
// microseconds for a join), which dominates the cost of the lookups every page makes. A hot query is built
// once per database with placeholder parameters, checked to bind them in order, and then run as raw SQL.
// On SQLite a hot query made on the root database (not inside a transaction) runs on a separate read-only
// connection, synchronously: it sees exactly what is committed, never waits behind another request's open
// transaction on the shared writer connection, and skips Kysely's per-query connection hand-off. Inside a
// transaction, pass the transaction: the root database would read the state from before it.
import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** Read-only SQLite connections, by the root Kysely instance whose file they read. */
const readers = new WeakMap<Kysely<DB>, SQLite.Database>();

/** Lets hot queries made on `db` itself read through `reader` (a read-only connection to the same file). */
export function attachReader(db: Kysely<DB>, reader: SQLite.Database): void {
  readers.set(db, reader);
}

/**
 * A query whose SQL text is compiled once per database and executed with fresh parameters. On a SQLite read
 * connection the rows come back synchronously (no promise, so a request's whole lookup stays on one turn of the
 * event loop); elsewhere as a promise. A failure is always a rejected promise.
 */
export function hotQuery<P extends readonly unknown[], R>(build: (db: Kysely<DB>, params: P) => Compilable<R>, arity: P['length']) {
  const compiled = new WeakMap<Kysely<DB>, string>();
  const prepared = new WeakMap<SQLite.Database, { stmt: SQLite.Statement; columns: string[] }>();

  function compile(db: Kysely<DB>): string {
    let text = compiled.get(db);
    if (text === undefined) {
      const placeholders = Array.from({ length: arity }, (_, i) => `\u0000hot-query-param-${i}`) as unknown as P;
      const template = build(db, placeholders).compile();
      // The raw execution below binds parameters by position: the template must use each exactly once, in order.
      if (template.parameters.length !== arity || template.parameters.some((p, i) => p !== placeholders[i])) {
        throw new Error('hotQuery: the query must bind each parameter exactly once, in order');
      }
      text = template.sql;
      compiled.set(db, text);
    }
    return text;
  }

  function readSync(reader: SQLite.Database, text: string, params: P): R[] {
    let entry = prepared.get(reader);
    if (entry === undefined) {
      const stmt = reader.prepare(text);
      if (!stmt.reader) throw new Error('hotQuery: only queries that return rows can run on the read connection');
      // Rows come back as arrays and are named here: better-sqlite3 names each column of each row through V8's
      // string table, which costs more than the statement itself.
      entry = { stmt: stmt.raw(true), columns: stmt.columns().map((c) => c.name) };
      prepared.set(reader, entry);
    }
    const { stmt, columns } = entry;
    return (stmt.all(...params) as unknown[][]).map((values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
      return row as R;
    });
  }

  return (db: Kysely<DB>, ...params: P): R[] | Promise<R[]> => {
    try {
      const text = compile(db);
      const reader = readers.get(db);
      if (reader) return readSync(reader, text, params);
      return db.executeQuery<R>(CompiledQuery.raw(text, [...params])).then((result) => result.rows);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

// Per-request queries compiled once: Kysely rebuilds and recompiles a query's tree on every call (tens of
// microseconds for a join), which dominates the cost of the lookups every page makes. A hot query is built
// once per database with placeholder parameters, checked to bind them in order, and then run as raw SQL.
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** A query whose SQL text is compiled once per database and executed with fresh parameters. */
export function hotQuery<P extends readonly unknown[], R>(build: (db: Kysely<DB>, params: P) => Compilable<R>, arity: P['length']) {
  const compiled = new WeakMap<Kysely<DB>, string>();
  return async (db: Kysely<DB>, ...params: P): Promise<R[]> => {
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
    const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...params]));
    return result.rows;
  };
}

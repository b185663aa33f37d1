// Plain, bounded queries behind /readyz, the database-held gauges of /metrics and the home page's "needs attention":
// each reads an index or a small table and stops after a fixed number of rows, so they stay cheap however large the
// store grows.
import { sql, type ExpressionBuilder, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** Counts stop here: a gauge showing this value means "at least this many". */
export const COUNT_CAP = 100_000;
/** Locked throttle keys read per scrape, at most. */
export const LOCKS_CAP = 10_000;

/** One trivial round trip: throws when the database cannot be reached. */
export async function ping(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Names of the applied migrations, from Kysely's own table (a few dozen rows); throws when the table is missing. */
export async function appliedMigrationNames(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return rows.map((r) => r.name);
}

// Literal states, so both planners use the partial indexes of migration 0009 (deliveries_due, deliveries_undelivered).
const pending = (eb: ExpressionBuilder<DB, 'deliveries'>) => eb('state', '=', sql.lit('pending' as const));
// The undelivered index's own condition, word for word (SQLite uses a partial index only then), narrowed to dead.
const dead = (eb: ExpressionBuilder<DB, 'deliveries'>) =>
  eb.and([sql<SqlBool>`"state" in ('dead', 'cancelled')`, eb('state', '=', sql.lit('dead' as const))]);

const due = (now: number) => (eb: ExpressionBuilder<DB, 'deliveries'>) =>
  eb.and([pending(eb), eb('next_attempt_at', '<=', now)]);

/** Counts the deliveries matching `where`, stopping at `cap`. */
async function countCapped(
  db: Kysely<DB>,
  where: (eb: ExpressionBuilder<DB, 'deliveries'>) => Expression<SqlBool>,
  cap = COUNT_CAP,
): Promise<number> {
  const row = await db
    .selectFrom((eb) => eb.selectFrom('deliveries').select(sql.lit(1).as('one')).where(where).limit(cap).as('d'))
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Pending deliveries due at `now`, counted up to COUNT_CAP. */
export function countDue(db: Kysely<DB>, now: number): Promise<number> {
  return countCapped(db, due(now));
}

/** The due time of the oldest pending delivery due at `now`; null when none is. */
export async function oldestDueAt(db: Kysely<DB>, now: number): Promise<number | null> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min<number | null>('next_attempt_at').as('at'))
    .where(due(now))
    .executeTakeFirst();
  return row?.at == null ? null : Number(row.at);
}

/** Dead-lettered deliveries in the store, counted up to COUNT_CAP. */
export function countDead(db: Kysely<DB>): Promise<number> {
  return countCapped(db, dead);
}

/** Deliveries dead-lettered at or after `since` (a range of the deliveries_undelivered index), counted up to `cap`. */
export function countDeadSince(db: Kysely<DB>, since: number, cap = COUNT_CAP): Promise<number> {
  return countCapped(db, (eb) => eb.and([dead(eb), eb('updated_at', '>=', since)]), cap);
}

/** Enabled channels whose latest attempt failed, counted up to `cap`. */
export async function failingChannels(db: Kysely<DB>, cap = COUNT_CAP): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('channels')
        .select(sql.lit(1).as('one'))
        .where('enabled', '=', 1)
        .where('consecutive_failures', '>', 0)
        .limit(cap)
        .as('c'),
    )
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Keys of the sign-in throttle locked at `now`, at most LOCKS_CAP of them. */
export async function lockedThrottleKeys(db: Kysely<DB>, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('auth_throttle')
    .select('key')
    .where('locked_until', '>', now)
    .limit(LOCKS_CAP)
    .execute();
  return rows.map((r) => r.key);
}

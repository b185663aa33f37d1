// Frozen: each attempt is a row again (delivery_attempts), now with its duration and a response excerpt, so operators
// can query and read attempts (as in Svix) instead of a JSON log spliced as text. Existing attempt logs become rows,
// in order. The deliveries table gives back the room 0010 left in its pages on PostgreSQL (fillfactor 50 served
// in-place claim updates, a speed trick the simpler worker no longer chases).
import { PostgresAdapter, sql, type Kysely } from 'kysely';

const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

// Creates delivery_attempts, moves every attempt log entry into a row (duration = finished_at - started_at), drops the
// log.
// An old log may hold one attempt number twice (a worker that re-claimed its own expired lease recorded it again);
// the earliest such entry is kept, as the primary key allows one row per attempt number.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('delivery_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('attempt_no', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .addPrimaryKeyConstraint('delivery_attempts_pk', ['delivery_id', 'attempt_no'])
    .execute();
  if (isPostgres(db)) {
    await sql`
      insert into delivery_attempts (delivery_id, attempt_no, started_at, duration_ms, verdict, status_code, error)
      select distinct on (d.id, (a->>'attempt_no')::int)
        d.id, (a->>'attempt_no')::int, (a->>'started_at')::bigint, ((a->>'finished_at')::bigint - (a->>'started_at')::bigint)::int,
        a->>'verdict', (a->>'status_code')::int, a->>'error'
      from deliveries d cross join lateral jsonb_array_elements(d.attempt_log::jsonb) a
      order by d.id, (a->>'attempt_no')::int, (a->>'started_at')::bigint`.execute(db);
    await sql`alter table deliveries reset (fillfactor)`.execute(db);
  } else {
    await sql`
      insert into delivery_attempts (delivery_id, attempt_no, started_at, duration_ms, verdict, status_code, error)
      select d.id, a.value ->> 'attempt_no', a.value ->> 'started_at', (a.value ->> 'finished_at') - (a.value ->> 'started_at'),
        a.value ->> 'verdict', a.value ->> 'status_code', a.value ->> 'error'
      from deliveries d, json_each(d.attempt_log) a
      where true
      order by d.id, a.value ->> 'attempt_no', a.value ->> 'started_at'
      on conflict (delivery_id, attempt_no) do nothing`.execute(db);
  }
  await db.schema.alterTable('deliveries').dropColumn('attempt_log').execute();
}

// Back to 0010's attempt log: finished_at is started_at + duration_ms; response excerpts are lost (the log had none).
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('deliveries')
    .addColumn('attempt_log', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  if (isPostgres(db)) {
    await sql`
      update deliveries d set attempt_log = a.log
      from (
        select delivery_id, json_agg(json_build_object('attempt_no', attempt_no, 'started_at', started_at, 'finished_at', started_at + duration_ms,
          'verdict', verdict, 'status_code', status_code, 'error', error) order by attempt_no)::text as log
        from delivery_attempts group by delivery_id
      ) a
      where d.id = a.delivery_id`.execute(db);
    await sql`alter table deliveries set (fillfactor = 50)`.execute(db);
  } else {
    await sql`
      update deliveries set attempt_log = (
        select json_group_array(json_object('attempt_no', attempt_no, 'started_at', started_at, 'finished_at', started_at + duration_ms,
          'verdict', verdict, 'status_code', status_code, 'error', error) order by attempt_no)
        from delivery_attempts a where a.delivery_id = deliveries.id
      )
      where id in (select delivery_id from delivery_attempts)`.execute(db);
  }
  await db.schema.dropTable('delivery_attempts').execute();
}

// Frozen: a delivery's attempts live on its own row, as a JSON array (`attempt_log`), instead of one row each in
// delivery_attempts. A series has at most five attempts (a re-send starts a new delivery row), so the log is bounded;
// recording a verdict then writes one row instead of two (no second heap row, no two index entries on random ids, no
// foreign-key check), and an attempt can never outlive or lose its delivery. Existing attempts are copied over in
// order.
// On PostgreSQL the deliveries table also leaves room in each page (fillfactor 50), so a claim, which changes no
// indexed column, can update its row in place (a HOT update) instead of adding an entry to every index.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('deliveries')
    .addColumn('attempt_log', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  if (isPostgres(db)) {
    await sql`
      update deliveries d set attempt_log = a.log
      from (
        select delivery_id, json_agg(json_build_object('attempt_no', attempt_no, 'started_at', started_at, 'finished_at', finished_at,
          'verdict', verdict, 'status_code', status_code, 'error', error) order by attempt_no)::text as log
        from delivery_attempts group by delivery_id
      ) a
      where d.id = a.delivery_id`.execute(db);
    await sql`alter table deliveries set (fillfactor = 50)`.execute(db);
  } else {
    await sql`
      update deliveries set attempt_log = (
        select json_group_array(json_object('attempt_no', attempt_no, 'started_at', started_at, 'finished_at', finished_at,
          'verdict', verdict, 'status_code', status_code, 'error', error) order by attempt_no)
        from delivery_attempts a where a.delivery_id = deliveries.id
      )
      where id in (select delivery_id from delivery_attempts)`.execute(db);
  }
  await db.schema.dropTable('delivery_attempts').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('attempt_no', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint', (c) => c.notNull())
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('delivery_attempts_delivery').on('delivery_attempts').column('delivery_id').execute();
  if (isPostgres(db)) {
    await sql`
      insert into delivery_attempts (id, delivery_id, attempt_no, started_at, finished_at, verdict, status_code, error)
      select d.id || '-' || (a->>'attempt_no'), d.id, (a->>'attempt_no')::int, (a->>'started_at')::bigint, (a->>'finished_at')::bigint,
        a->>'verdict', (a->>'status_code')::int, a->>'error'
      from deliveries d cross join lateral jsonb_array_elements(d.attempt_log::jsonb) a`.execute(db);
    await sql`alter table deliveries reset (fillfactor)`.execute(db);
  } else {
    await sql`
      insert into delivery_attempts (id, delivery_id, attempt_no, started_at, finished_at, verdict, status_code, error)
      select d.id || '-' || (a.value ->> 'attempt_no'), d.id, a.value ->> 'attempt_no', a.value ->> 'started_at', a.value ->> 'finished_at',
        a.value ->> 'verdict', a.value ->> 'status_code', a.value ->> 'error'
      from deliveries d, json_each(d.attempt_log) a`.execute(db);
  }
  await db.schema.alterTable('deliveries').dropColumn('attempt_log').execute();
}

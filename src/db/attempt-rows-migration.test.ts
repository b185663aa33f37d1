// Upgrading to 0011: each delivery's attempt log becomes one row per attempt, in order, with its duration; the log
// column goes and, on PostgreSQL, the deliveries table's fillfactor is reset. Going back down restores both.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, dialects, migratorThrough } from '../../test/helpers/db.ts';

for (const dialect of dialects()) {
  test(`${dialect}: 0011 moves each delivery's attempt log into rows in order, and back down again`, async () => {
    const tdb = await createTestDatabase(dialect, { migrate: false });
    const db = tdb.db as unknown as Kysely<any>;
    const columns = async () =>
      dialect === 'postgres'
        ? (
            await sql<{
              name: string;
            }>`select column_name as name from information_schema.columns where table_name = 'deliveries'`.execute(db)
          ).rows.map((r) => r.name)
        : (await sql<{ name: string }>`select name from pragma_table_info('deliveries')`.execute(db)).rows.map(
            (r) => r.name,
          );
    const attemptTables = async () =>
      dialect === 'postgres'
        ? (
            await sql<{
              n: number;
            }>`select count(*)::int as n from information_schema.tables where table_name = 'delivery_attempts'`.execute(
              db,
            )
          ).rows[0]!.n
        : (
            await sql<{
              n: number;
            }>`select count(*) as n from sqlite_master where type = 'table' and name = 'delivery_attempts'`.execute(db)
          ).rows[0]!.n;
    const fillfactor = async () =>
      (await sql<{ o: string[] | null }>`select reloptions as o from pg_class where relname = 'deliveries'`.execute(db))
        .rows[0]!.o;
    try {
      assert.equal((await migratorThrough(db, '0010-delivery-attempt-log').migrateToLatest()).error, undefined);
      if (dialect === 'postgres') assert.deepEqual(await fillfactor(), ['fillfactor=50']);
      await db
        .insertInto('accounts')
        .values({
          id: 'a1',
          username: 'admin',
          username_lower: 'admin',
          password_hash: 'x',
          role: 'admin',
          totp_secret: null,
          totp_enabled: 0,
          totp_last_step: null,
          totp_enrol_prompt: 0,
          created_at: 1,
        })
        .execute();
      await db
        .insertInto('channels')
        .values({
          id: 'c1',
          url: 'https://hooks.example.com/x',
          secret: null,
          classes: 'drift',
          enabled: 1,
          created_at: 1,
          updated_at: 1,
          created_by: 'a1',
        })
        .execute();
      await db
        .insertInto('messages')
        .values({
          id: 'm1',
          class: 'drift',
          cause: 'drift',
          subject_kind: 'host',
          subject_key: 'web-1',
          instant: 1,
          headline: 'h',
          census: null,
          link: null,
          body: '{}',
          created_at: 1,
        })
        .execute();
      const delivery = {
        message_id: 'm1',
        channel_id: 'c1',
        next_attempt_at: 1,
        lease_owner: null,
        lease_until: null,
        delivered_at: null,
        created_at: 1,
        updated_at: 1,
        last_error: null,
      };
      const first = {
        attempt_no: 1,
        started_at: 10,
        finished_at: 11,
        verdict: 'failed',
        status_code: null,
        error: 'connection refused "quoted" ✓',
      };
      const second = {
        attempt_no: 2,
        started_at: 70_000,
        finished_at: 70_250,
        verdict: 'delivered',
        status_code: 204,
        error: null,
      };
      // The old recording could log one attempt number twice (a worker re-claiming its own expired lease): kept once,
      // the earliest.
      const repeated = { ...first, started_at: 60_500, finished_at: 60_900, error: 'timed out after 10 s' };
      // The second log is laid out as PostgreSQL's json_agg writes it (0010 on PostgreSQL), with spaces and line
      // breaks.
      await db
        .insertInto('deliveries')
        .values([
          {
            ...delivery,
            id: 'd-retried',
            state: 'delivered',
            attempts: 2,
            attempt_log: JSON.stringify([repeated, first, second]),
          },
          {
            ...delivery,
            id: 'd-once',
            state: 'pending',
            attempts: 1,
            attempt_log: `[${JSON.stringify(first, null, 1)}] \n`,
          },
          { ...delivery, id: 'd-fresh', state: 'pending', attempts: 0, attempt_log: '[]' },
        ])
        .execute();

      assert.equal((await migratorThrough(db, '0011-delivery-attempt-rows').migrateToLatest()).error, undefined);
      const rows = await db
        .selectFrom('delivery_attempts')
        .selectAll()
        .orderBy('delivery_id')
        .orderBy('attempt_no')
        .execute();
      const row = (id: string, a: typeof first | typeof second) => ({
        delivery_id: id,
        attempt_no: a.attempt_no,
        started_at: a.started_at,
        duration_ms: a.finished_at - a.started_at,
        verdict: a.verdict,
        status_code: a.status_code,
        error: a.error,
        response_excerpt: null,
      });
      assert.deepEqual(rows, [row('d-once', first), row('d-retried', first), row('d-retried', second)]);
      assert.ok(!(await columns()).includes('attempt_log'), 'the log column is gone');
      if (dialect === 'postgres') assert.equal(await fillfactor(), null, 'the fillfactor is back to the default');
      // The same attempt cannot be recorded twice, and the rows go with their delivery.
      await assert.rejects(
        db
          .insertInto('delivery_attempts')
          .values({ ...row('d-once', first), response_excerpt: 'again' })
          .execute(),
      );
      await db
        .insertInto('deliveries')
        .values({ ...delivery, id: 'd-gone', state: 'dead', attempts: 1 })
        .execute();
      await db.insertInto('delivery_attempts').values(row('d-gone', first)).execute();
      await db.deleteFrom('deliveries').where('id', '=', 'd-gone').execute();
      assert.equal(
        (await db.selectFrom('delivery_attempts').select('attempt_no').where('delivery_id', '=', 'd-gone').execute())
          .length,
        0,
      );
      await db
        .insertInto('delivery_attempts')
        .values({ ...row('d-fresh', first), response_excerpt: 'lost on the way down' })
        .execute();

      assert.equal((await migratorThrough(db, '0011-delivery-attempt-rows').migrateDown()).error, undefined);
      assert.equal(await attemptTables(), 0, 'the attempts table is gone');
      if (dialect === 'postgres') assert.deepEqual(await fillfactor(), ['fillfactor=50']);
      const back = await db.selectFrom('deliveries').select(['id', 'attempt_log']).orderBy('id').execute();
      assert.deepEqual(
        back.map((r: { id: string; attempt_log: string }) => [r.id, JSON.parse(r.attempt_log)]),
        [
          ['d-fresh', [first]],
          ['d-once', [first]],
          ['d-retried', [first, second]],
        ],
      );
      assert.equal(
        (await migratorThrough(db, '0011-delivery-attempt-rows').migrateToLatest()).error,
        undefined,
        'and up again',
      );
      assert.equal((await db.selectFrom('delivery_attempts').select('delivery_id').execute()).length, 4);
    } finally {
      await tdb.drop();
    }
  });
}

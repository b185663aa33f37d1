// Upgrading to 0010: the attempts recorded in delivery_attempts move onto their deliveries' attempt logs, in order,
// and going back down restores them as rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, dialects, migratorThrough } from '../../test/helpers/db.ts';

for (const dialect of dialects()) {
  test(`${dialect}: 0010 moves each delivery's attempts onto its row in order, and back down again`, async () => {
    const tdb = await createTestDatabase(dialect, { migrate: false });
    const db = tdb.db as unknown as Kysely<any>;
    try {
      assert.equal((await migratorThrough(db, '0009-delivery-due-pending').migrateToLatest()).error, undefined);
      await db.insertInto('accounts').values({ id: 'a1', username: 'admin', username_lower: 'admin', password_hash: 'x', role: 'admin', totp_secret: null, totp_enabled: 0, totp_last_step: null, totp_enrol_prompt: 0, created_at: 1 }).execute();
      await db.insertInto('channels').values({ id: 'c1', url: 'https://hooks.example.com/x', secret: null, classes: 'drift', enabled: 1, created_at: 1, updated_at: 1, created_by: 'a1' }).execute();
      await db.insertInto('messages').values({ id: 'm1', class: 'drift', cause: 'drift', subject_kind: 'host', subject_key: 'web-1', instant: 1, headline: 'h', census: null, link: null, body: '{}', created_at: 1 }).execute();
      const delivery = { message_id: 'm1', channel_id: 'c1', next_attempt_at: 1, lease_owner: null, lease_until: null, delivered_at: null, created_at: 1, updated_at: 1 };
      await db
        .insertInto('deliveries')
        .values([
          { ...delivery, id: 'd-retried', state: 'delivered', attempts: 2, last_error: null },
          { ...delivery, id: 'd-fresh', state: 'pending', attempts: 0, last_error: null },
        ])
        .execute();
      const attempt = { delivery_id: 'd-retried', started_at: 10, finished_at: 11 };
      // Inserted out of order: the log follows attempt_no, not insertion order.
      await db
        .insertInto('delivery_attempts')
        .values([
          { ...attempt, id: 'z-second', attempt_no: 2, started_at: 70_000, finished_at: 70_005, verdict: 'delivered', status_code: 204, error: null },
          { ...attempt, id: 'a-first', attempt_no: 1, verdict: 'failed', status_code: null, error: 'connection refused' },
        ])
        .execute();

      assert.equal((await migratorThrough(db, '0010-delivery-attempt-log').migrateToLatest()).error, undefined);
      const rows = await db.selectFrom('deliveries').select(['id', 'attempt_log']).orderBy('id').execute();
      assert.deepEqual(
        rows.map((r: { id: string; attempt_log: string }) => [r.id, JSON.parse(r.attempt_log)]),
        [
          ['d-fresh', []],
          [
            'd-retried',
            [
              { attempt_no: 1, started_at: 10, finished_at: 11, verdict: 'failed', status_code: null, error: 'connection refused' },
              { attempt_no: 2, started_at: 70_000, finished_at: 70_005, verdict: 'delivered', status_code: 204, error: null },
            ],
          ],
        ],
      );
      const tables = async () =>
        dialect === 'postgres'
          ? (await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_name = 'delivery_attempts'`.execute(db)).rows[0]!.n
          : (await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = 'delivery_attempts'`.execute(db)).rows[0]!.n;
      assert.equal(await tables(), 0, 'the attempts table is gone');

      assert.equal((await migratorThrough(db, '0010-delivery-attempt-log').migrateDown()).error, undefined);
      const back = await db.selectFrom('delivery_attempts').select(['delivery_id', 'attempt_no', 'started_at', 'finished_at', 'verdict', 'status_code', 'error']).orderBy('attempt_no').execute();
      assert.deepEqual(
        back.map((r: Record<string, unknown>) => ({ ...r, started_at: Number(r.started_at), finished_at: Number(r.finished_at) })),
        [
          { delivery_id: 'd-retried', attempt_no: 1, started_at: 10, finished_at: 11, verdict: 'failed', status_code: null, error: 'connection refused' },
          { delivery_id: 'd-retried', attempt_no: 2, started_at: 70_000, finished_at: 70_005, verdict: 'delivered', status_code: 204, error: null },
        ],
      );
    } finally {
      await tdb.drop();
    }
  });
}

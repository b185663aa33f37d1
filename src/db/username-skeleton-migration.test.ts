// Upgrading to 0013: every account gets its confusable skeleton, oldest first; when two existing accounts already look
// alike ("аdmin" and "admin", "Iisa" and "lisa"), the older keeps the skeleton and the newer is left NULL (the
// migration never fails); afterwards the index holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { createTestDatabase, dialects, migratorThrough } from '../../test/helpers/db.ts';
import { usernameSkeleton } from '../features/auth/lookalike.ts';

for (const dialect of dialects()) {
  test(`${dialect}: 0013 backfills username skeletons, leaving a newer look-alike NULL, and enforces them from then on`, async () => {
    const tdb = await createTestDatabase(dialect, { migrate: false });
    const db = tdb.db as unknown as Kysely<any>;
    try {
      assert.equal((await migratorThrough(db, '0011-delivery-attempt-rows').migrateToLatest()).error, undefined);
      const account = (id: string, username: string, created_at: number) => ({
        id,
        username,
        username_lower: username.toLowerCase(),
        password_hash: 'x',
        role: 'viewer',
        totp_secret: null,
        totp_enabled: 0,
        totp_last_step: null,
        totp_enrol_prompt: 0,
        created_at,
      });
      // Inserted newest first, so the order of the backfill comes from created_at, not from the table's order.
      await db
        .insertInto('accounts')
        .values([account('a3', '\u0430dmin', 3), account('a2', 'bob', 2), account('a1', 'admin', 1)])
        .execute();
      // Capital I's prototype is l: the frozen skeleton folds case and confusables together, so "Iisa" meets "lisa".
      await db
        .insertInto('accounts')
        .values([account('a6', 'Iisa', 6), account('a5', 'lisa', 5)])
        .execute();

      assert.equal((await migratorThrough(db, '0013-username-skeleton').migrateToLatest()).error, undefined);
      const rows = await db.selectFrom('accounts').select(['id', 'username_skeleton']).orderBy('id').execute();
      assert.deepEqual(rows, [
        { id: 'a1', username_skeleton: usernameSkeleton('admin') },
        { id: 'a2', username_skeleton: usernameSkeleton('bob') },
        { id: 'a3', username_skeleton: null },
        { id: 'a5', username_skeleton: usernameSkeleton('lisa') },
        { id: 'a6', username_skeleton: null },
      ]);
      await assert.rejects(
        db
          .insertInto('accounts')
          .values({ ...account('a4', 'adrnin', 4), username_skeleton: usernameSkeleton('adrnin') })
          .execute(),
      );
      // Going back down drops the index and the column; the accounts stay.
      assert.equal((await migratorThrough(db, '0013-username-skeleton').migrateDown()).error, undefined);
      const after = await db.selectFrom('accounts').selectAll().where('id', '=', 'a1').executeTakeFirstOrThrow();
      assert.ok(!('username_skeleton' in after), 'the column is gone');
    } finally {
      await tdb.drop();
    }
  });
}

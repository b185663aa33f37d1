import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { createTestDatabase, forEachDialect } from '../../test/helpers/db.ts';
import { buildAccount } from '../../test/helpers/factories.ts';
import { openDatabase } from './connect.ts';
import { migrateToLatest } from './migrate.ts';
import { hotQuery } from './hot-query.ts';

forEachDialect((getDb) => {
  test('a hot query binds fresh parameters on every call', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t, { username: 'hot-a' });
    const b = await buildAccount(t, { username: 'hot-b' });
    const byId = hotQuery((db, [id]: readonly [string]) => db.selectFrom('accounts').select('username').where('id', '=', id), 1);
    assert.deepEqual(await byId(t.deps.db, a.id), [{ username: 'hot-a' }]);
    assert.deepEqual(await byId(t.deps.db, b.id), [{ username: 'hot-b' }]);
    assert.deepEqual(await byId(t.deps.db, 'nobody'), []);
  });

  test('a hot query that would bind parameters out of order or twice is refused', async () => {
    const t = buildTestApp(getDb());
    const reordered = hotQuery(
      (db, [first, second]: readonly [string, string]) => db.selectFrom('accounts').select('id').where('username', '=', second).where('id', '=', first),
      2,
    );
    const reorderedResult = reordered(t.deps.db, 'x', 'y');
    assert.ok(reorderedResult instanceof Promise, 'a failure is a rejected promise, never a synchronous throw');
    await assert.rejects(reorderedResult, /in order/);
    const twice = hotQuery((db, [id]: readonly [string]) => db.selectFrom('accounts').select('id').where('id', '=', id).where('username', '=', id), 1);
    const twiceResult = twice(t.deps.db, 'x');
    assert.ok(twiceResult instanceof Promise);
    await assert.rejects(twiceResult, /exactly once/);
  });
});

test('on SQLite the read connection sees each commit at once, closes with the database, and is absent for in-memory files', async () => {
  const tdb = await createTestDatabase('sqlite');
  const t = buildTestApp(tdb);
  const account = await buildAccount(t, { username: 'reader-a' });
  const byId = hotQuery((db, [id]: readonly [string]) => db.selectFrom('accounts').select('username').where('id', '=', id), 1);
  assert.deepEqual(await byId(tdb.db, account.id), [{ username: 'reader-a' }]);
  await tdb.db.updateTable('accounts').set({ username: 'reader-b' }).where('id', '=', account.id).execute();
  assert.deepEqual(await byId(tdb.db, account.id), [{ username: 'reader-b' }], 'a committed write is read at once');
  assert.deepEqual(byId(tdb.db, account.id), [{ username: 'reader-b' }], 'the read connection answers synchronously');
  await tdb.db.transaction().execute(async (trx) => {
    await trx.updateTable('accounts').set({ username: 'reader-c' }).where('id', '=', account.id).execute();
    assert.deepEqual(await byId(tdb.db, account.id), [{ username: 'reader-b' }], 'the root database never reads an open transaction');
  });
  await tdb.drop();
  const closed = byId(tdb.db, account.id);
  assert.ok(closed instanceof Promise, 'a failure on the read connection is a rejected promise');
  await assert.rejects(closed, /not open/, 'the read connection closed with the database');

  for (const file of [':memory:', '']) {
    const { db } = openDatabase({ kind: 'sqlite', path: file });
    assert.equal((await migrateToLatest(db)).ok, true);
    assert.deepEqual(await byId(db, 'nobody'), [], `no read connection for ${JSON.stringify(file)}; the writer answers`);
    await db.destroy();
  }
});

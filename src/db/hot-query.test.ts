import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { buildAccount } from '../../test/helpers/factories.ts';
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
    await assert.rejects(reordered(t.deps.db, 'x', 'y'), /in order/);
    const twice = hotQuery((db, [id]: readonly [string]) => db.selectFrom('accounts').select('id').where('id', '=', id).where('username', '=', id), 1);
    await assert.rejects(twice(t.deps.db, 'x'), /exactly once/);
  });
});

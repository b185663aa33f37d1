import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';

forEachDialect((getDb) => {
  test('a refused sign-in writes nothing: a locked address flooding new usernames leaves the throttle table as it was', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const sprayer = t.client();
    sprayer.address = '192.0.2.61';
    for (let i = 0; i < 30; i++)
      assert.equal((await sprayer.post('/login', { username: `someone-${i}`, password: 'password123' })).status, 401);
    const snapshot = () => t.deps.db.selectFrom('auth_throttle').selectAll().orderBy('key').execute();
    const before = await snapshot();

    for (let i = 0; i < 40; i++) {
      const res = await sprayer.post('/login', { username: `fresh-name-${i}`, password: 'password123' });
      assert.equal(res.status, 429);
    }
    assert.equal(
      (await sprayer.post('/login', { username: a.username, password: a.password })).status,
      429,
      'the lock still holds for a real account',
    );
    assert.deepEqual(await snapshot(), before, 'no row added or changed by refused attempts');
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../test/helpers/factories.ts';
import { housekeepOnce } from './housekeeping.ts';

forEachDialect((getDb) => {
  test('housekeeping deletes idle sessions and stale throttle counters, and keeps live ones', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    await signIn(t, a);
    const elsewhere = t.client();
    elsewhere.address = '198.51.100.77';
    await elsewhere.post('/login', { username: 'someone-else', password: 'wrong password' });
    t.clock.advance(12 * 60 * 60_000 + 1); // past a session's 12 hours without a request
    const live = await signIn(t, a);
    const stale = () =>
      t.deps.db
        .selectFrom('auth_throttle')
        .select('key')
        .where('window_started_at', '<=', t.clock.now() - 15 * 60_000)
        .execute();
    assert.ok((await stale()).length > 0, 'the old failure left a counter behind');
    await housekeepOnce(t.deps);
    const sessions = await t.deps.db
      .selectFrom('sessions')
      .select('account_id')
      .where('account_id', '=', a.id)
      .execute();
    assert.equal(sessions.length, 1, 'only the live session is left');
    assert.equal((await live.get('/')).status, 200);
    assert.deepEqual(await stale(), []);
  });
});

// Upgrading to 0022: sessions from before it keep working with no single sign-on origin (NULLs), providers start
// with "Sign out at the provider too" off; deleting a provider then deletes the sessions it opened. Going back down
// drops the new columns and tables and keeps the sessions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { createTestDatabase, dialects, migratorThrough } from '../../test/helpers/db.ts';

for (const dialect of dialects()) {
  test(`${dialect}: 0022 gives older sessions no provider, providers sign-out off, and ties new sessions to their provider`, async () => {
    const tdb = await createTestDatabase(dialect, { migrate: false });
    const db = tdb.db as unknown as Kysely<any>;
    try {
      assert.equal((await migratorThrough(db, '0020-passkeys').migrateToLatest()).error, undefined);
      await db
        .insertInto('accounts')
        .values({ id: 'a1', username: 'ann', username_lower: 'ann', password_hash: 'x', role: 'admin', created_at: 1 })
        .execute();
      const session = (id: string) => ({
        id_hash: id,
        public_id: `p-${id}`,
        account_id: 'a1',
        stage: 'full',
        csrf_token: 'c',
        created_at: 1,
        last_seen_at: 1,
        expires_at: 2,
        user_agent: 'ua',
      });
      await db.insertInto('sessions').values(session('old')).execute();
      const provider = { display_name: 'Corp', issuer: 'https://idp.example', client_id: 'svc', enabled: 1 };
      await db
        .insertInto('sso_providers')
        .values({ id: 'p1', slug: 'corp', ...provider, created_at: 1, updated_at: 1, created_by: 'a1' })
        .execute();

      assert.equal((await migratorThrough(db, '0022-sso-logout').migrateToLatest()).error, undefined);
      const old = await db.selectFrom('sessions').selectAll().where('id_hash', '=', 'old').executeTakeFirstOrThrow();
      assert.deepEqual(
        [old.sso_provider_id, old.sso_sub, old.sso_sid, old.sso_id_token],
        [null, null, null, null],
        'a session from before knows no provider',
      );
      const p1 = await db.selectFrom('sso_providers').selectAll().executeTakeFirstOrThrow();
      assert.equal(Number(p1.sign_out_at_provider), 0);
      await db
        .insertInto('sessions')
        .values({ ...session('sso'), sso_provider_id: 'p1', sso_sub: 's', sso_sid: 'sid', sso_id_token: 'x.y.z' })
        .execute();
      await db.insertInto('sso_logout_jtis').values({ provider_id: 'p1', jti_hash: 'h', expires_at: 1 }).execute();
      await db.deleteFrom('sso_providers').where('id', '=', 'p1').execute();
      const left = await db.selectFrom('sessions').select('id_hash').execute();
      assert.deepEqual(
        left.map((r) => r.id_hash),
        ['old'],
        'the provider took the session it opened with it',
      );
      assert.equal((await db.selectFrom('sso_logout_jtis').selectAll().execute()).length, 0);

      assert.equal((await migratorThrough(db, '0022-sso-logout').migrateDown()).error, undefined);
      const after = await db.selectFrom('sessions').selectAll().executeTakeFirstOrThrow();
      assert.equal(after.id_hash, 'old');
      assert.ok(!('sso_provider_id' in after), 'the columns are gone');
    } finally {
      await tdb.drop();
    }
  });
}

// Upgrading to 0016: invitations keep every row (author included) and gain a note; created_by becomes nullable (a
// host-minted invitation) while still refusing the removal of an authoring account; sessions gain reauthed_at.
// Going down drops the host-minted rows (they cannot satisfy NOT NULL) and the new columns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { createTestDatabase, dialects, migratorThrough } from '../../test/helpers/db.ts';

for (const dialect of dialects()) {
  test(`${dialect}: 0016 keeps invitations, adds the note and a nullable author, and adds sessions.reauthed_at`, async () => {
    const tdb = await createTestDatabase(dialect, { migrate: false });
    const db = tdb.db as unknown as Kysely<any>;
    try {
      assert.equal((await migratorThrough(db, '0015-account-lifecycle').migrateToLatest()).error, undefined);
      await db
        .insertInto('accounts')
        .values({
          id: 'a1',
          username: 'ann',
          username_lower: 'ann',
          password_hash: 'x',
          role: 'admin',
          totp_enabled: 0,
          totp_enrol_prompt: 0,
          created_at: 1,
        })
        .execute();
      const invitation = {
        id: 'i1',
        token_hash: 'h1',
        role: 'viewer',
        created_at: 2,
        expires_at: 3,
        spent_at: null,
        revoked_at: 4,
        created_by: 'a1',
      };
      await db.insertInto('invitations').values(invitation).execute();
      await db
        .insertInto('sessions')
        .values({
          id_hash: 's1',
          public_id: 'p1',
          account_id: 'a1',
          stage: 'full',
          csrf_token: 'c',
          created_at: 1,
          last_seen_at: 1,
          expires_at: 9,
        })
        .execute();

      assert.equal((await migratorThrough(db, '0016-secrets-and-reauth').migrateToLatest()).error, undefined);
      const row = await db.selectFrom('invitations').selectAll().where('id', '=', 'i1').executeTakeFirstOrThrow();
      assert.deepEqual(
        {
          ...row,
          created_at: Number(row.created_at),
          expires_at: Number(row.expires_at),
          revoked_at: Number(row.revoked_at),
        },
        { ...invitation, note: null },
      );
      assert.equal((await db.selectFrom('sessions').select('reauthed_at').executeTakeFirstOrThrow()).reauthed_at, null);
      // A host-minted invitation has no author; the token hash stays unique; the author reference still holds.
      await db
        .insertInto('invitations')
        .values({ ...invitation, id: 'i2', token_hash: 'h2', created_by: null, note: 'for Dana' })
        .execute();
      await assert.rejects(
        db
          .insertInto('invitations')
          .values({ ...invitation, id: 'i3' })
          .execute(),
        'token_hash stays unique',
      );
      await assert.rejects(
        db
          .insertInto('invitations')
          .values({ ...invitation, id: 'i4', token_hash: 'h4', created_by: 'nobody' })
          .execute(),
        'the author must exist',
      );
      await assert.rejects(db.deleteFrom('accounts').where('id', '=', 'a1').execute(), 'an author cannot be removed');

      assert.equal((await migratorThrough(db, '0016-secrets-and-reauth').migrateDown()).error, undefined);
      const left = await db.selectFrom('invitations').selectAll().execute();
      assert.deepEqual(
        left.map((r) => r.id),
        ['i1'],
        'the host-minted invitation is dropped on the way down',
      );
      assert.ok(!('note' in left[0]!), 'the note column is gone');
      await assert.rejects(
        db
          .insertInto('invitations')
          .values({ ...invitation, id: 'i5', token_hash: 'h5', created_by: null })
          .execute(),
        'NOT NULL again',
      );
    } finally {
      await tdb.drop();
    }
  });
}

// Frozen: a non-secret public id per session, so a session list can name sessions without exposing id hashes.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Nullable at the SQL level (SQLite cannot add a NOT NULL column without a default); every row gets one below
  // and every new session is created with one.
  await db.schema.alterTable('sessions').addColumn('public_id', 'text').execute();
  const rows: { id_hash: string }[] = await db.selectFrom('sessions').select('id_hash').execute();
  for (const row of rows) {
    await db
      .updateTable('sessions')
      .set({ public_id: crypto.randomBytes(16).toString('base64url') })
      .where('id_hash', '=', row.id_hash)
      .execute();
  }
  await db.schema.createIndex('sessions_public_id').on('sessions').column('public_id').unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sessions_public_id').execute();
  await db.schema.alterTable('sessions').dropColumn('public_id').execute();
}

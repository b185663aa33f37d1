// Frozen: secrets revealed once after a redirect, and one-time tokens of minting forms.
// Both belong to a session and go with it (ON DELETE CASCADE).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('session_reveals')
    .addColumn('session_id_hash', 'text', (c) => c.notNull().references('sessions.id_hash').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_reveals_pk', ['session_id_hash', 'kind'])
    .execute();
  await db.schema
    .createTable('spent_form_tokens')
    .addColumn('session_id_hash', 'text', (c) => c.notNull().references('sessions.id_hash').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('spent_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('spent_form_tokens_pk', ['session_id_hash', 'token_hash'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('spent_form_tokens').execute();
  await db.schema.dropTable('session_reveals').execute();
}

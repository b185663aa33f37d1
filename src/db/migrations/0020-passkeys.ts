// Frozen: passkeys (WebAuthn credentials) and the challenges their ceremonies answer.
// - passkeys: one row per registered credential. credential_id (base64url) is unique across every account, so one
//   authenticator credential can never name two accounts; public_key is the COSE key (base64url); counter is the last
//   signature counter seen (0 for authenticators that keep none). Deleted with its account.
// - webauthn_challenges: a random challenge held server-side for the one session or pending sign-in that asked
//   (owner_hash: the SHA-256 of that session's id or of the pending sign-in's cookie), one per owner and purpose,
//   taken (deleted) by the answer that uses it, refused after expires_at.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('device_type', 'text', (c) => c.notNull().check(sql`device_type in ('singleDevice', 'multiDevice')`))
    .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0).check(sql`backed_up in (0, 1)`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_account_id').on('passkeys').column('account_id').execute();
  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('owner_hash', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('register', 'second-factor', 'sign-in')`))
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webauthn_challenges_pk', ['owner_hash', 'purpose'])
    .execute();
  await db.schema
    .createIndex('webauthn_challenges_expires_at')
    .on('webauthn_challenges')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
}

// Frozen: what signing out with an identity provider needs.
// - sessions: a session opened through single sign-on keeps its provider, the verified `sub`, the id_token's `sid`
//   (when it had one) and the id_token itself (the hint for signing out at the provider); all NULL for password
//   sessions and for sessions older than this migration. Deleting a provider deletes the sessions it opened. Indexed
//   by (provider, sub) and (provider, sid), the two lookups of a back-channel logout.
// - sso_providers.sign_out_at_provider: 1 sends the browser to the provider's end-session endpoint after signing out
//   of a session that provider opened; off (0) unless an administrator turns it on.
// - sso_logout_jtis: the `jti` (its SHA-256) of every back-channel logout token accepted, per provider, kept until the
//   token could no longer be accepted, so a replayed token is refused.
// - sso_sign_outs: a sign-out at the provider waiting for the browser (the end-session URL, which carries the
//   id_token), taken once by the browser that holds its handle (the SHA-256 is stored), short-lived.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('sso_provider_id', 'text', (c) => c.references('sso_providers.id').onDelete('cascade'))
    .execute();
  await db.schema.alterTable('sessions').addColumn('sso_sub', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('sso_sid', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('sso_id_token', 'text').execute();
  await db.schema.createIndex('sessions_sso_sub').on('sessions').columns(['sso_provider_id', 'sso_sub']).execute();
  await db.schema.createIndex('sessions_sso_sid').on('sessions').columns(['sso_provider_id', 'sso_sid']).execute();
  await db.schema
    .alterTable('sso_providers')
    .addColumn('sign_out_at_provider', 'integer', (c) =>
      c.notNull().defaultTo(0).check(sql`sign_out_at_provider in (0, 1)`),
    )
    .execute();
  await db.schema
    .createTable('sso_logout_jtis')
    .addColumn('provider_id', 'text', (c) => c.notNull().references('sso_providers.id').onDelete('cascade'))
    .addColumn('jti_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sso_logout_jtis_pk', ['provider_id', 'jti_hash'])
    .execute();
  await db.schema.createIndex('sso_logout_jtis_expires_at').on('sso_logout_jtis').column('expires_at').execute();
  await db.schema
    .createTable('sso_sign_outs')
    .addColumn('handle_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider_id', 'text', (c) => c.notNull().references('sso_providers.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_sign_outs_expires_at').on('sso_sign_outs').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_sign_outs').execute();
  await db.schema.dropTable('sso_logout_jtis').execute();
  await db.schema.alterTable('sso_providers').dropColumn('sign_out_at_provider').execute();
  await db.schema.dropIndex('sessions_sso_sid').execute();
  await db.schema.dropIndex('sessions_sso_sub').execute();
  for (const column of ['sso_id_token', 'sso_sid', 'sso_sub', 'sso_provider_id'])
    await db.schema.alterTable('sessions').dropColumn(column).execute();
}

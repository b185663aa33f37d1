// Frozen: SSO providers and the identity bindings that let a provider's (issuer, sub) sign in as a local account.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // Write-only; absent means a public, PKCE-only client.
    .addColumn('client_secret', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Authorship: no cascade, so removing the author is refused by the database.
    .addColumn('created_by', 'text', (c) => c.notNull().references('accounts.id').onDelete('no action'))
    .execute();

  await db.schema
    .createTable('sso_identities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Deleting a provider deletes its bindings.
    .addColumn('provider_id', 'text', (c) => c.notNull().references('sso_providers.id').onDelete('cascade'))
    .addColumn('sub', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .execute();
  // An identity is bound to at most one account; an account holds at most one identity per provider.
  await db.schema
    .createIndex('sso_identities_provider_sub')
    .on('sso_identities')
    .columns(['provider_id', 'sub'])
    .unique()
    .execute();
  await db.schema
    .createIndex('sso_identities_account_provider')
    .on('sso_identities')
    .columns(['account_id', 'provider_id'])
    .unique()
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_identities').execute();
  await db.schema.dropTable('sso_providers').execute();
}

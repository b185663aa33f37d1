// Frozen: an account's lifecycle: suspension as a state beside the role, the time of the last full sign-in,
// and administrator-minted password reset links (one live link per account, stored only as the token's SHA-256).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // NULL while active; the time of suspension otherwise. Not a role: the two roles stay admin and viewer.
  await db.schema.alterTable('accounts').addColumn('suspended_at', 'bigint').execute();
  // Set at every completed sign-in (password or SSO, second factor included); NULL until the first.
  await db.schema.alterTable('accounts').addColumn('last_sign_in_at', 'bigint').execute();

  // The account id is the key, so a newer link replaces the older one; removing the account removes its link.
  await db.schema
    .createTable('password_resets')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('password_resets').execute();
  await db.schema.alterTable('accounts').dropColumn('last_sign_in_at').execute();
  await db.schema.alterTable('accounts').dropColumn('suspended_at').execute();
}

// Frozen: sso_spent_states, the SSO flows whose callback was already taken. A flow's state (its SHA-256 only) is
// recorded when its callback is first accepted and kept until the flow would have expired, so a callback replayed with
// its flow cookie is refused on every instance even when the provider would exchange the same code twice.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_spent_states')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_spent_states_expires_at').on('sso_spent_states').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_spent_states').execute();
}

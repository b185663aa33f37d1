// Frozen: the JSON API.
// - api_tokens.read_only: 1 for a token minted read-only (GET and HEAD only; every write answers 403).
// - api_idempotency: the first answer to POST /api/messages per (account, Idempotency-Key), kept 24 hours so a retry
//   with the same key and body gets the same answer and stores nothing new. Deleted with its account.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_tokens')
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0).check(sql`read_only in (0, 1)`))
    .execute();
  await db.schema
    .createTable('api_idempotency')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_idempotency_pk', ['account_id', 'key'])
    .execute();
  await db.schema.createIndex('api_idempotency_created_at').on('api_idempotency').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_idempotency').execute();
  await db.schema.alterTable('api_tokens').dropColumn('read_only').execute();
}

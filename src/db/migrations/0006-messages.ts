// Frozen: per-account read state of the message store (a read-all watermark plus individual read marks).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // One row per account that has ever marked messages read: every message created at or before
  // read_through counts as read, so "read all" is one row whatever the size of the store.
  await db.schema
    .createTable('message_read_marks')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('read_through', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  // Messages read one by one above the watermark. message_created_at copies the message's created_at,
  // so rows below a moved watermark can be dropped without a join.
  await db.schema
    .createTable('message_reads')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('message_created_at', 'bigint', (c) => c.notNull())
    .addColumn('read_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_reads_pk', ['account_id', 'message_id'])
    .execute();
  // Cascading deletes from pruned messages look rows up by message.
  await db.schema.createIndex('message_reads_message').on('message_reads').column('message_id').execute();
  await db.schema
    .createIndex('message_reads_account_created')
    .on('message_reads')
    .columns(['account_id', 'message_created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['message_reads', 'message_read_marks']) await db.schema.dropTable(t).execute();
}

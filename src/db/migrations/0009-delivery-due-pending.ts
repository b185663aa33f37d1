// Frozen: the due index holds pending deliveries only. A delivery leaves it when it is delivered, dead-lettered or
// cancelled instead of moving to another place in it, so the index stays as small as the backlog, the claim reads no
// finished rows, and recording a verdict writes one index entry fewer. The admin's list of undelivered deliveries
// (dead-lettered or cancelled) gets a small index of its own, which the old one used to serve.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deliveries_due').execute();
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .column('next_attempt_at')
    .where(sql.ref('state'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('deliveries_undelivered')
    .on('deliveries')
    .column('updated_at')
    .where(sql.ref('state'), 'in', ['dead', 'cancelled'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deliveries_undelivered').execute();
  await db.schema.dropIndex('deliveries_due').execute();
  await db.schema.createIndex('deliveries_due').on('deliveries').columns(['state', 'next_attempt_at']).execute();
}

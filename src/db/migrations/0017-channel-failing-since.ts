// Frozen: channels.failing_since, when the channel's current failure streak began (shown as "failing since <time>").
// A failed attempt sets it if it is unset, a delivered one clears it. Channels already failing are backfilled with
// their first failed attempt after their last success, or, with no such attempt left, the time of their last error.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').addColumn('failing_since', 'bigint').execute();
  await db
    .updateTable('channels')
    .set({
      failing_since: sql`coalesce((
        select min(a.started_at) from delivery_attempts a join deliveries d on d.id = a.delivery_id
        where d.channel_id = channels.id and a.verdict = 'failed' and a.started_at > coalesce(channels.last_success_at, -1)
      ), channels.last_error_at)`,
    })
    .where('consecutive_failures', '>', 0)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').dropColumn('failing_since').execute();
}

// Factories for outbox rows (channels, messages with pending deliveries), written straight to the schema of
// migration 0002 so delivery tests do not depend on emit() or the channel admin routes.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ChannelsTable, DB, MessagesTable } from '../../src/db/schema.ts';
import { newId, systemRandom } from '../../src/deps.ts';

/** The account that authors factory channels (created on first use per database). */
async function factoryAuthor(db: Kysely<DB>): Promise<string> {
  const existing = await db.selectFrom('accounts').select('id').where('username_lower', '=', 'outbox-factory').executeTakeFirst();
  if (existing) return existing.id;
  const id = newId(systemRandom);
  await db
    .insertInto('accounts')
    .values({
      id,
      username: 'outbox-factory',
      username_lower: 'outbox-factory',
      password_hash: 'x',
      role: 'admin',
      totp_secret: null,
      totp_enabled: 0,
      totp_last_step: null,
      totp_enrol_prompt: 0,
      created_at: 0,
    })
    .execute();
  return id;
}

/** Inserts a channel (enabled, all classes, no secret unless asked) and returns its row. */
export async function buildChannel(
  db: Kysely<DB>,
  opts: { url: string; secret?: string | null; classes?: string[]; enabled?: boolean; now?: number; createdBy?: string },
): Promise<ChannelsTable> {
  const now = opts.now ?? 0;
  const row: ChannelsTable = {
    id: newId(systemRandom),
    url: opts.url,
    secret: opts.secret ?? null,
    classes: [...(opts.classes ?? ['clock', 'coverage', 'drift'])].sort().join(','),
    enabled: opts.enabled === false ? 0 : 1,
    consecutive_failures: 0,
    last_error: null,
    last_error_at: null,
    last_success_at: null,
    created_at: now,
    updated_at: now,
    created_by: opts.createdBy ?? (await factoryAuthor(db)),
  };
  await db.insertInto('channels').values(row).execute();
  return row;
}

/**
 * Inserts a message (body serialized once, SPEC 2.6 fields) and one pending delivery per given channel id,
 * due at `now`, in one transaction, the way emit() does. Returns the message and the delivery ids by channel.
 */
export async function buildMessageWithDeliveries(
  db: Kysely<DB>,
  opts: { channelIds: string[]; now: number; headline?: string; census?: number; link?: string },
): Promise<{ message: MessagesTable; deliveryIds: Map<string, string> }> {
  const id = newId(systemRandom);
  const headline = opts.headline ?? `Drift on host web-${crypto.randomBytes(3).toString('hex')} — “quoted” ✓`;
  const body = JSON.stringify({
    message: id,
    class: 'drift',
    cause: 'drift',
    subject: { kind: 'host', key: 'web-1.example.net' },
    instant: new Date(opts.now).toISOString(),
    headline,
    ...(opts.census === undefined ? {} : { census: opts.census }),
    ...(opts.link === undefined ? {} : { link: opts.link }),
  });
  const message: MessagesTable = {
    id,
    class: 'drift',
    cause: 'drift',
    subject_kind: 'host',
    subject_key: 'web-1.example.net',
    instant: opts.now,
    headline,
    census: opts.census ?? null,
    link: opts.link ?? null,
    body,
    created_at: opts.now,
  };
  const deliveryIds = new Map<string, string>();
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('messages').values(message).execute();
    const rows = opts.channelIds.map((channelId) => {
      const deliveryId = newId(systemRandom);
      deliveryIds.set(channelId, deliveryId);
      return {
        id: deliveryId,
        message_id: id,
        channel_id: channelId,
        state: 'pending' as const,
        attempts: 0,
        next_attempt_at: opts.now,
        lease_owner: null,
        lease_until: null,
        delivered_at: null,
        last_error: null,
        created_at: opts.now,
        updated_at: opts.now,
      };
    });
    // Chunked: SQLite caps the bound parameters of one statement.
    for (let i = 0; i < rows.length; i += 500) await trx.insertInto('deliveries').values(rows.slice(i, i + 500)).execute();
  });
  return { message, deliveryIds };
}

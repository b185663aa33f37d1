// Factories for the outbox (channels, messages and their deliveries) and its cleanup between tests.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ChannelsTable, DB, MessagesTable } from '../../src/db/schema.ts';
import { newId, systemRandom } from '../../src/deps.ts';
import { CLI_ACTOR } from '../../src/features/auth/admin-actor.ts';
import { emit, serializeBody, type EmitInput } from '../../src/features/messages/emit.service.ts';
import { insertDeliveriesForClass, insertMessage } from '../../src/features/messages/messages.repo.ts';
import type { TestApp } from './app.ts';

/** A test app or its database: factories that need no clock take either. */
type Target = Kysely<DB> | TestApp;
const dbOf = (target: Target): Kysely<DB> => ('deps' in target ? target.deps.db : target);

/** The account that authors factory channels (created on first use per database). */
async function factoryAuthor(db: Kysely<DB>): Promise<string> {
  const existing = await db
    .selectFrom('accounts')
    .select('id')
    .where('username_lower', '=', 'outbox-factory')
    .executeTakeFirst();
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

/**
 * Inserts a channel row directly (no URL validation, so tests can use any address) and returns it: enabled, all
 * classes, no secret unless asked; a random https URL unless given; created at the test clock's time (or 0).
 */
export async function buildChannel(
  target: Target,
  opts: {
    url?: string;
    secret?: string | null;
    classes?: string | string[];
    enabled?: boolean;
    now?: number;
    createdBy?: string;
  } = {},
): Promise<ChannelsTable> {
  const db = dbOf(target);
  const now = opts.now ?? ('deps' in target ? target.clock.now() : 0);
  const classes =
    typeof opts.classes === 'string' ? opts.classes.split(',') : (opts.classes ?? ['clock', 'coverage', 'drift']);
  const row: ChannelsTable = {
    id: newId(systemRandom),
    url: opts.url ?? `https://hooks.example.com/${newId(systemRandom)}`,
    secret: opts.secret ?? null,
    classes: [...classes].sort().join(','),
    enabled: opts.enabled === false ? 0 : 1,
    consecutive_failures: 0,
    last_error: null,
    last_error_at: null,
    last_success_at: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
    created_by: opts.createdBy ?? (await factoryAuthor(db)),
  };
  await db.insertInto('channels').values(row).execute();
  return row;
}

/** Emits a valid message (drift by default) through emit() and returns its id; throws if emit refuses. */
export async function buildMessage(t: TestApp, overrides: Partial<EmitInput> = {}): Promise<string> {
  const result = await emit(t.deps, CLI_ACTOR, {
    cause: 'drift',
    subject: { kind: 'service', key: `svc-${newId(systemRandom)}` },
    instant: t.clock.now(),
    headline: 'The service moved.',
    ...overrides,
  });
  if (!result.ok) throw new Error(`emit refused: ${JSON.stringify(result)}`);
  return result.id;
}

/**
 * Stores a drift message created at `now` with one pending delivery, due at `now`, to each of the named channels,
 * through emit()'s own body serialization and inserts (one transaction), without waking any worker. emit() fans out
 * to every enabled drift channel; a test names its channels, so the others' rows are dropped in the same transaction.
 * Every named channel must be enabled and take drift. Returns the message and the delivery ids by channel.
 */
export async function buildMessageWithDeliveries(
  db: Kysely<DB>,
  opts: { channelIds: string[]; now: number; headline?: string; census?: number; link?: string },
): Promise<{ message: MessagesTable; deliveryIds: Map<string, string> }> {
  const id = newId(systemRandom);
  const headline = opts.headline ?? `Drift on host web-${crypto.randomBytes(3).toString('hex')} — “quoted” ✓`;
  const subject = { kind: 'host', key: 'web-1.example.net' };
  const census = opts.census ?? null;
  const body = serializeBody({
    id,
    class: 'drift',
    cause: 'drift',
    subject,
    instant: opts.now,
    headline,
    census,
    link: opts.link,
  });
  const message: MessagesTable = {
    id,
    class: 'drift',
    cause: 'drift',
    subject_kind: subject.kind,
    subject_key: subject.key,
    instant: opts.now,
    headline,
    census,
    link: opts.link ?? null,
    body,
    created_at: opts.now,
  };
  const deliveryIds = new Map<string, string>();
  await db.transaction().execute(async (trx) => {
    await insertMessage(trx, message);
    await insertDeliveriesForClass(trx, { messageId: id, class: 'drift', now: opts.now });
    const named = new Set(opts.channelIds);
    const others: string[] = [];
    for (const d of await trx
      .selectFrom('deliveries')
      .select(['id', 'channel_id'])
      .where('message_id', '=', id)
      .execute()) {
      if (named.has(d.channel_id!)) deliveryIds.set(d.channel_id!, d.id);
      else others.push(d.id);
    }
    // Chunked: SQLite caps the bound parameters of one statement.
    for (let i = 0; i < others.length; i += 500)
      await trx
        .deleteFrom('deliveries')
        .where('id', 'in', others.slice(i, i + 500))
        .execute();
    const missing = opts.channelIds.filter((c) => !deliveryIds.has(c));
    if (missing.length > 0)
      throw new Error(`no delivery for channel(s) ${missing.join(', ')}: each must exist, be enabled and take drift`);
  });
  return { message, deliveryIds };
}

/**
 * Empties the outbox (attempts, deliveries, messages, read marks, channels, the retention dial) between tests sharing a
 * database.
 */
export async function clearOutbox(target: Target): Promise<void> {
  const db = dbOf(target);
  await db.deleteFrom('delivery_attempts').execute();
  await db.deleteFrom('message_reads').execute();
  await db.deleteFrom('message_read_marks').execute();
  await db.deleteFrom('deliveries').execute();
  await db.deleteFrom('messages').execute();
  await db.deleteFrom('channels').execute();
  await db.deleteFrom('meta').where('key', 'like', 'messages.%').execute();
}

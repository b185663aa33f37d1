// Factories for the message store and channels.
import { newId, systemRandom } from '../../src/deps.ts';
import { emit, type EmitInput } from '../../src/features/messages/emit.service.ts';
import type { TestApp } from './app.ts';
import { buildChannel as insertChannel } from './outbox-factories.ts';

/** Inserts a channel row directly (no URL validation, so tests can use any address), authored by `createdBy`. */
export async function buildChannel(
  t: TestApp,
  opts: { createdBy: string; url?: string; classes?: string; enabled?: boolean; secret?: string | null },
): Promise<{ id: string; url: string }> {
  const row = await insertChannel(t.deps.db, {
    url: opts.url ?? `https://hooks.example.com/${newId(systemRandom)}`,
    classes: opts.classes?.split(','),
    enabled: opts.enabled,
    secret: opts.secret,
    createdBy: opts.createdBy,
    now: t.clock.now(),
  });
  return { id: row.id, url: row.url };
}

/** Emits a valid message (drift by default) and returns its id; throws if emit refuses. */
export async function buildMessage(t: TestApp, overrides: Partial<EmitInput> = {}): Promise<string> {
  const result = await emit(t.deps, {
    cause: 'drift',
    subject: { kind: 'service', key: `svc-${newId(systemRandom)}` },
    instant: t.clock.now(),
    headline: 'The service moved.',
    ...overrides,
  });
  if (!result.ok) throw new Error(`emit refused: ${JSON.stringify(result.errors)}`);
  return result.id;
}

/** Empties the message store and channels (between tests sharing one database). */
export async function clearOutbox(t: TestApp): Promise<void> {
  const db = t.deps.db;
  await db.deleteFrom('message_reads').execute();
  await db.deleteFrom('message_read_marks').execute();
  await db.deleteFrom('deliveries').execute();
  await db.deleteFrom('messages').execute();
  await db.deleteFrom('channels').execute();
  await db.deleteFrom('meta').where('key', 'like', 'messages.%').execute();
}

// Delivery test helpers: a fixture resolver, a test address policy, and table cleanup.
import type { Kysely } from 'kysely';
import type { AttemptLogEntry, DB } from '../../src/db/schema.ts';
import { isGloballyReachable } from '../../src/net/address-policy.ts';
import type { ResolvedAddress, Resolver } from '../../src/net/outbound.ts';
import { attemptLog } from '../../src/features/delivery/delivery.repo.ts';

/** A resolver answering from a table; a function entry is called per lookup (for rebinding fixtures). Records every lookup. */
export function fixtureResolver(table: Record<string, string[] | ((call: number) => string[])>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const addresses = typeof entry === 'function' ? entry(calls.filter((c) => c === hostname).length) : entry;
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

/** The one test exception to the production policy: 127.0.0.1 counts as reachable; everything else as in production. */
export const allowTestLoopback = (address: string) => address === '127.0.0.1' || isGloballyReachable(address);

/** Empties the outbox tables (tests in one file share a database). */
export async function clearOutbox(db: Kysely<DB>): Promise<void> {
  await db.deleteFrom('deliveries').execute();
  await db.deleteFrom('messages').execute();
  await db.deleteFrom('channels').execute();
}

/** The attempts recorded on the given delivery (or on every delivery), oldest first, each with its delivery's id. */
export async function attemptsOf(db: Kysely<DB>, deliveryId?: string): Promise<(AttemptLogEntry & { delivery_id: string })[]> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['id', 'attempt_log'])
    .$if(deliveryId !== undefined, (q) => q.where('id', '=', deliveryId!))
    .execute();
  return rows.flatMap((r) => attemptLog(r).map((a) => ({ ...a, delivery_id: r.id })));
}

/** Waits for a condition that background work or other processes will make true (polled; never a fixed sleep). */
export async function until(condition: () => boolean | Promise<boolean>, options: { limitMs?: number; everyMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.limitMs ?? 30_000);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 5));
  }
}

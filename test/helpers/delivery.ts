// Delivery test helpers: a fixture resolver, a test address policy, the recorded attempts, and waiting on background
// work.
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import type { AttemptRow } from '../../src/features/delivery/attempts.repo.ts';
import { isGloballyReachable } from '../../src/net/address-policy.ts';
import type { ResolvedAddress, Resolver } from '../../src/net/outbound.ts';

// Kept only for importers not yet switched to ./outbox.ts, where the one clearOutbox lives; delete once none is left.
export { clearOutbox } from './outbox.ts';

/**
 * A resolver answering from a table; a function entry is called per lookup (for rebinding fixtures). Records every
 * lookup.
 */
export function fixtureResolver(
  table: Record<string, string[] | ((call: number) => string[])>,
): Resolver & { calls: string[] } {
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

/** The attempt rows of the given delivery (or of every delivery), oldest first. */
export async function attemptsOf(db: Kysely<DB>, deliveryId?: string): Promise<AttemptRow[]> {
  return db
    .selectFrom('delivery_attempts')
    .selectAll()
    .$if(deliveryId !== undefined, (q) => q.where('delivery_id', '=', deliveryId!))
    .orderBy('started_at')
    .orderBy('delivery_id')
    .orderBy('attempt_no')
    .execute();
}

/** Waits for a condition that background work or other processes will make true (polled; never a fixed sleep). */
export async function until(
  condition: () => boolean | Promise<boolean>,
  options: { limitMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.limitMs ?? 30_000);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 5));
  }
}

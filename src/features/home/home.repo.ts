// Bounded reads behind the home page: what needs an admin's attention now, and what a new admin has not set up yet.
import type { AliasedSelectQueryBuilder, Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** A failing channel as the home page lists it. */
export interface FailingChannelRow {
  id: string;
  url: string;
  consecutive_failures: number;
  last_error_at: number | null;
}

/** Enabled channels whose latest attempts failed, longest streak first, at most `limit`. */
export function failingChannelRows(db: Q, limit: number): Promise<FailingChannelRow[]> {
  return db
    .selectFrom('channels')
    .select(['id', 'url', 'consecutive_failures', 'last_error_at'])
    .where('enabled', '=', 1)
    .where('consecutive_failures', '>', 0)
    .orderBy('consecutive_failures', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Counts the rows a bounded subquery selects (it carries its own LIMIT, so the count stops there). */
async function countOf(db: Q, inner: AliasedSelectQueryBuilder<{ id: string }, 'x'>): Promise<number> {
  const row = await db
    .selectFrom(inner)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Invitations neither spent, revoked nor expired at `now`, counted up to `cap`. */
export function countOpenInvitations(db: Q, now: number, cap: number): Promise<number> {
  return countOf(
    db,
    db
      .selectFrom('invitations')
      .select('id')
      .where('spent_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .limit(cap)
      .as('x'),
  );
}

/**
 * Which first steps an admin has taken: a channel declared, an SSO provider declared, someone invited (or a second
 * account).
 */
export async function setupProgress(db: Q): Promise<{ channel: boolean; sso: boolean; invited: boolean }> {
  const [channel, sso, invitation, accounts] = await Promise.all([
    db.selectFrom('channels').select('id').limit(1).executeTakeFirst(),
    db.selectFrom('sso_providers').select('id').limit(1).executeTakeFirst(),
    db.selectFrom('invitations').select('id').limit(1).executeTakeFirst(),
    db.selectFrom('accounts').select('id').limit(2).execute(),
  ]);
  return {
    channel: channel !== undefined,
    sso: sso !== undefined,
    invited: invitation !== undefined || accounts.length > 1,
  };
}

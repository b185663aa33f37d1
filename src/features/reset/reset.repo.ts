// Plain data access for password reset links; no business rules here.
import type { Kysely, Transaction } from 'kysely';
import type { DB, PasswordResetsTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** Stores the account's one link, replacing any earlier one in the same statement (so racing mints leave one). */
export async function upsertReset(db: Q, row: PasswordResetsTable): Promise<void> {
  await db
    .insertInto('password_resets')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('account_id')
        .doUpdateSet({ token_hash: row.token_hash, created_at: row.created_at, expires_at: row.expires_at }),
    )
    .execute();
}

/** A link by the SHA-256 of its token, with its account's name and state. */
export function findResetByTokenHash(db: Q, tokenHash: string) {
  return db
    .selectFrom('password_resets')
    .innerJoin('accounts', 'accounts.id', 'password_resets.account_id')
    .select(['password_resets.account_id', 'password_resets.expires_at', 'accounts.username', 'accounts.suspended_at'])
    .where('password_resets.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** When the account's link stops working, if it has an unexpired one. */
export async function findLiveResetExpiry(db: Q, accountId: string, now: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('password_resets')
    .select('expires_at')
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.expires_at;
}

/**
 * Deletes the link only if it is unexpired and its account is active; returns the account id when this call spent
 * it. The conditions live in the DELETE itself, so of two racing uses exactly one gets the row.
 */
export async function spendReset(db: Q, tokenHash: string, now: number): Promise<string | undefined> {
  const row = await db
    .deleteFrom('password_resets')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .where('account_id', 'in', (eb) => eb.selectFrom('accounts').select('id').where('suspended_at', 'is', null))
    .returning('account_id')
    .executeTakeFirst();
  return row?.account_id;
}

/** Voids the account's reset link, if any (its owner changed the password themselves). */
export async function voidReset(db: Q, accountId: string): Promise<void> {
  await db.deleteFrom('password_resets').where('account_id', '=', accountId).execute();
}

// Plain data access for personal API tokens; no business rules here.
import type { Kysely, Transaction } from 'kysely';
import type { ApiTokensTable, DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** Inserts a token row (the hash only, never the token). */
export async function insertToken(db: Q, row: Omit<ApiTokensTable, 'last_used_at'>): Promise<void> {
  await db
    .insertInto('api_tokens')
    .values({ ...row, last_used_at: null })
    .execute();
}

/** The account's tokens without their hashes, newest first. */
export function listTokensOf(db: Q, accountId: string) {
  return db
    .selectFrom('api_tokens')
    .select(['id', 'name', 'created_at', 'expires_at', 'last_used_at', 'read_only'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Deletes a token only when it belongs to the account; returns how many rows went (0 or 1). */
export async function deleteTokenOf(db: Q, accountId: string, id: string): Promise<number> {
  const result = await db
    .deleteFrom('api_tokens')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes every token of the account; returns how many went. */
export async function deleteTokensOfAccount(db: Q, accountId: string): Promise<number> {
  const result = await db.deleteFrom('api_tokens').where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A token by its hash, with its owner's current username and role. */
export function findTokenWithAccount(db: Q, tokenHash: string) {
  return db
    .selectFrom('api_tokens')
    .innerJoin('accounts', 'accounts.id', 'api_tokens.account_id')
    .select([
      'api_tokens.id as tokenId',
      'api_tokens.expires_at',
      'api_tokens.last_used_at',
      'api_tokens.read_only',
      'accounts.id',
      'accounts.username',
      'accounts.role',
      'accounts.suspended_at',
    ])
    .where('api_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Writes last_used_at unless it was written less than `everyMs` ago (so most reads stay reads). */
export async function touchToken(db: Q, id: string, now: number, everyMs: number): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - everyMs)]))
    .execute();
}

/**
 * One token of the account by id (never its hash), with whether the account is suspended; undefined when not its own.
 */
export function findTokenOf(db: Q, accountId: string, id: string) {
  return db
    .selectFrom('api_tokens')
    .innerJoin('accounts', 'accounts.id', 'api_tokens.account_id')
    .select(['api_tokens.expires_at', 'api_tokens.read_only', 'accounts.suspended_at'])
    .where('api_tokens.id', '=', id)
    .where('api_tokens.account_id', '=', accountId)
    .executeTakeFirst();
}

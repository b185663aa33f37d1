// Plain data access for accounts; no business rules here.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AccountsTable, DB } from '../../db/schema.ts';
import { usernameSkeleton } from './lookalike.ts';

type Q = Kysely<DB> | Transaction<DB>;

export type Account = Selectable<AccountsTable>;

/** The unique key of a username: Unicode NFC, lower-cased, so case and composition variants of one name collide. */
export function usernameKey(username: string): string {
  return username.normalize('NFC').toLowerCase();
}

/** Finds an account by its case-insensitive username. */
export function findAccountByUsername(db: Q, username: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('username_lower', '=', usernameKey(username)).executeTakeFirst();
}

/** Finds an account whose username has this confusable skeleton (see lookalike.ts); its id only. */
export function findAccountBySkeleton(db: Q, skeleton: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('accounts').select('id').where('username_skeleton', '=', skeleton).executeTakeFirst();
}

/** Finds an account by id. */
export function findAccountById(db: Q, id: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Inserts an account row; a duplicate or look-alike username (same lower-cased name or skeleton) surfaces as a unique
 * violation.
 */
export async function insertAccount(
  db: Q,
  row: Pick<Account, 'id' | 'username' | 'password_hash' | 'role' | 'created_at'>,
): Promise<void> {
  await db
    .insertInto('accounts')
    .values({
      ...row,
      username_lower: usernameKey(row.username),
      username_skeleton: usernameSkeleton(row.username),
      totp_enabled: 0,
      totp_enrol_prompt: 1,
    })
    .execute();
}

/** How many accounts exist, capped at `cap` (cheap on any table size). */
export async function countAccounts(db: Q, cap = 1): Promise<number> {
  const rows = await db.selectFrom('accounts').select('id').limit(cap).execute();
  return rows.length;
}

/** Records a completed sign-in (password or SSO, second factor included) for the team list. */
export async function recordSignIn(db: Q, accountId: string, now: number): Promise<void> {
  await db.updateTable('accounts').set({ last_sign_in_at: now }).where('id', '=', accountId).execute();
}

/** Replaces the password hash and moves the credentials version on, so every older session and device token lapses. */
export async function replacePasswordHash(db: Q, accountId: string, passwordHash: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set((eb) => ({ password_hash: passwordHash, credentials_version: eb('credentials_version', '+', 1) }))
    .where('id', '=', accountId)
    .execute();
}

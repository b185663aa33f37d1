// Plain data access for the team: accounts as admins see them, invitations, and the admin-row lock.
import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB, InvitationsTable } from '../../db/schema.ts';
import { factorsOf, type Factors } from '../second-factor/factors.ts';

type Q = Kysely<DB> | Transaction<DB>;

export type Role = 'admin' | 'viewer';

/** An account as the team list shows it (no secrets). */
export interface TeamAccountRow {
  id: string;
  username: string;
  role: Role;
  totp_enabled: number;
  created_at: number;
  suspended_at: number | null;
  last_sign_in_at: number | null;
}

/** An account as the team list shows it, with its second factors (whether TOTP is on, how many passkeys). */
export type TeamAccount = TeamAccountRow & { factors: Factors };

/** The rows with their second factors, read in one more query however many rows there are. */
export async function withFactors(db: Q, rows: TeamAccountRow[]): Promise<TeamAccount[]> {
  const factors = await factorsOf(db, rows);
  return rows.map((r) => ({ ...r, factors: factors.get(r.id)! }));
}

/** An unspent, unrevoked invitation with its author's name. */
export interface OpenInvitationRow {
  id: string;
  role: Role;
  created_at: number;
  expires_at: number;
  /** NULL when minted from the host command line (invitations.created_by is NULL only then). */
  created_by: string | null;
  created_by_username: string | null;
  note: string | null;
}

const TEAM_ACCOUNT_COLUMNS = [
  'id',
  'username',
  'role',
  'totp_enabled',
  'created_at',
  'suspended_at',
  'last_sign_in_at',
] as const;

/** One account as the team list shows it. */
export function findTeamAccount(db: Q, id: string): Promise<TeamAccountRow | undefined> {
  return db.selectFrom('accounts').select(TEAM_ACCOUNT_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** Every account, by username. */
export function listAccounts(db: Q): Promise<TeamAccountRow[]> {
  return db.selectFrom('accounts').select(TEAM_ACCOUNT_COLUMNS).orderBy('username_lower').execute();
}

/**
 * Accounts in the order they were created (ties by id), from just after the keyset `after` when given; only those of
 * `role` and in `state` when given.
 */
export function listAccountsPage(
  db: Q,
  page: { after?: { createdAt: number; id: string }; limit: number; role?: Role; state?: 'active' | 'suspended' },
): Promise<TeamAccountRow[]> {
  let q = db.selectFrom('accounts').select(TEAM_ACCOUNT_COLUMNS);
  if (page.role) q = q.where('role', '=', page.role);
  if (page.state) q = q.where('suspended_at', page.state === 'active' ? 'is' : 'is not', null);
  const after = page.after;
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    );
  return q.orderBy('created_at').orderBy('id').limit(page.limit).execute();
}

/**
 * Invitations neither spent nor revoked, newest first (ties by id, descending), from just after the keyset `after` when
 * given; with `expired`, only those whose time ran out by `now` (true) or those still pending (false).
 */
export function listOpenInvitations(
  db: Q,
  page: { after?: { createdAt: number; id: string }; limit: number; expired?: { is: boolean; now: number } },
): Promise<OpenInvitationRow[]> {
  let q = db
    .selectFrom('invitations')
    .leftJoin('accounts', 'accounts.id', 'invitations.created_by')
    .select([
      'invitations.id',
      'invitations.role',
      'invitations.created_at',
      'invitations.expires_at',
      'invitations.created_by',
      'accounts.username as created_by_username',
      'invitations.note',
    ])
    .where('invitations.spent_at', 'is', null)
    .where('invitations.revoked_at', 'is', null);
  if (page.expired) q = q.where('invitations.expires_at', page.expired.is ? '<=' : '>', page.expired.now);
  const after = page.after;
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('invitations.created_at', '<', after.createdAt),
        eb.and([eb('invitations.created_at', '=', after.createdAt), eb('invitations.id', '<', after.id)]),
      ]),
    );
  }
  return q.orderBy('invitations.created_at', 'desc').orderBy('invitations.id', 'desc').limit(page.limit).execute();
}

/** Whether an invitation was accepted or revoked, or undefined when no invitation has this id. */
export function findInvitationState(db: Q, id: string) {
  return db.selectFrom('invitations').select(['spent_at', 'revoked_at']).where('id', '=', id).executeTakeFirst();
}

/**
 * How many API tokens (unexpired, counting those of a suspended account) and linked SSO identities the account holds.
 */
export async function countCredentials(
  db: Q,
  accountId: string,
  now: number,
): Promise<{ tokens: number; identities: number }> {
  const [tokens, identities] = await Promise.all([
    db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('sso_identities')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow(),
  ]);
  return { tokens: Number(tokens.n), identities: Number(identities.n) };
}

/** How many invitations minted by `accountId` can still be accepted (neither spent, revoked nor expired). */
export async function countLiveInvitationsBy(db: Q, accountId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('invitations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('created_by', '=', accountId)
    .where('spent_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts an invitation row (token stored only as its hash). */
export async function insertInvitation(
  db: Q,
  row: Omit<InvitationsTable, 'spent_at' | 'revoked_at' | 'note'> & { note?: string | null },
): Promise<void> {
  await db
    .insertInto('invitations')
    .values({ note: null, ...row, spent_at: null, revoked_at: null })
    .execute();
}

/** Finds an invitation by the SHA-256 of its token. */
export function findInvitationByTokenHash(db: Q, tokenHash: string): Promise<InvitationsTable | undefined> {
  return db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Marks an invitation spent only if it is still unspent, unrevoked and unexpired; true when this call spent it.
 * The condition lives in the UPDATE itself, so of two racing acceptances exactly one sees a changed row.
 */
export async function spendInvitation(db: Q, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ spent_at: now })
    .where('id', '=', id)
    .where('spent_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Revokes an invitation if it is still unspent and unrevoked; true when this call revoked it. */
export async function revokeInvitation(db: Q, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('spent_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * The ids of every active (unsuspended) admin account, locked for the rest of the transaction on PostgreSQL (SQLite
 * transactions already hold the single write lock). Locked in id order so two guards never deadlock each other; a
 * row another guard changed meanwhile is re-checked against both conditions once its lock is released.
 */
export async function lockAdminIds(trx: Transaction<DB>, dialect: Dialect): Promise<string[]> {
  const q = trx
    .selectFrom('accounts')
    .select('id')
    .where('role', '=', 'admin')
    .where('suspended_at', 'is', null)
    .orderBy('id');
  const rows = await (dialect === 'postgres' ? q.forUpdate() : q).execute();
  return rows.map((r) => r.id);
}

/** Sets an account's role. */
export async function setRole(db: Q, id: string, role: Role): Promise<void> {
  await db.updateTable('accounts').set({ role }).where('id', '=', id).execute();
}

/** Clears an account's TOTP secret, enabled flag and replay marker, and asks its next sign-in to enrol. */
export async function clearSecondFactor(db: Q, id: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ totp_secret: null, totp_enabled: 0, totp_last_step: null, totp_enrol_prompt: 1 })
    .where('id', '=', id)
    .execute();
}

/** Deletes every recovery code of an account. */
export async function deleteRecoveryCodes(db: Q, accountId: string): Promise<void> {
  await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
}

/** Deletes an account; sessions, recovery codes and API tokens cascade, authored rows make it fail. */
export async function deleteAccount(db: Q, id: string): Promise<void> {
  await db.deleteFrom('accounts').where('id', '=', id).execute();
}

/** Suspends (a time) or reactivates (null) an account. */
export async function setSuspended(db: Q, id: string, at: number | null): Promise<void> {
  await db.updateTable('accounts').set({ suspended_at: at }).where('id', '=', id).execute();
}

/**
 * Every table whose rows name an author in `created_by` (a foreign key to accounts without cascade, so the database
 * refuses to remove an author). team.test.ts checks this list against the database's own foreign keys.
 */
export const AUTHORED_TABLES = ['invitations', 'channels', 'sso_providers'] as const;

/** How many rows the account authored, over every authored table. */
export async function countAuthored(db: Q, accountId: string): Promise<number> {
  let total = 0;
  for (const table of AUTHORED_TABLES) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('created_by', '=', accountId)
      .executeTakeFirstOrThrow();
    total += Number(row.n);
  }
  return total;
}

/** Moves every authored row from one account to another; returns how many moved. */
export async function moveAuthored(db: Q, fromId: string, toId: string): Promise<number> {
  let moved = 0;
  for (const table of AUTHORED_TABLES) {
    const result = await db
      .updateTable(table)
      .set({ created_by: toId })
      .where('created_by', '=', fromId)
      .executeTakeFirst();
    moved += Number(result.numUpdatedRows);
  }
  return moved;
}

/**
 * The account, locked for the rest of the transaction on PostgreSQL, so a suspension or removal waits for it.
 * Undefined when it does not exist.
 */
export async function lockAccount(trx: Transaction<DB>, dialect: Dialect, id: string) {
  const q = trx.selectFrom('accounts').select(['id', 'username', 'suspended_at']).where('id', '=', id);
  return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
}

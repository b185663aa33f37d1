// Server-side sessions: the cookie carries a 256-bit random id, the database only its SHA-256.
import type { Deps } from '../../deps.ts';
import { newId, randomToken, sha256 } from '../../deps.ts';
import type { Kysely, Transaction } from 'kysely';
import type { DB, SessionsTable } from '../../db/schema.ts';
import type { Account } from './accounts.repo.ts';

/** A signed-in session ends after this long without a request. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** A session ends this long after sign-in, whatever the activity. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** A half-signed-in session (owing a second factor or offered enrolment) lasts this long. */
export const SESSION_PENDING_MS = 10 * 60 * 1000;
/** last_seen_at is written at most this often, so reads stay reads. */
const TOUCH_EVERY_MS = 60 * 1000;

export type Stage = SessionsTable['stage'];

/** The session and its account as read together on every request. */
export interface SessionContext {
  idHash: string;
  /** Non-secret id shown in the owner's session list. */
  publicId: string;
  stage: Stage;
  csrfToken: string;
  account: Pick<Account, 'id' | 'username' | 'role' | 'totp_enabled'>;
}

/** The stage a session starts in after a verified first factor (password now, SSO later). */
export function stageAfterFirstFactor(account: Pick<Account, 'totp_enabled' | 'totp_enrol_prompt'>): Stage {
  if (account.totp_enabled === 1) return 'totp';
  // First sign-in, or the first after an admin re-enrolment: walk through enrolment (skippable).
  return account.totp_enrol_prompt === 1 ? 'enrol' : 'full';
}

/** Starts a fresh session (a new id at every sign-in) and returns the cookie value. */
export async function createSession(
  deps: Deps,
  accountId: string,
  stage: Stage,
  userAgent: string,
): Promise<string> {
  const id = randomToken(deps.random, 32);
  const now = deps.clock.now();
  await deps.db
    .insertInto('sessions')
    .values({
      id_hash: sha256(id),
      public_id: newId(deps.random),
      account_id: accountId,
      stage,
      csrf_token: randomToken(deps.random, 32),
      created_at: now,
      last_seen_at: now,
      expires_at: now + (stage === 'full' ? SESSION_ABSOLUTE_MS : SESSION_PENDING_MS),
      user_agent: userAgent.slice(0, 300),
    })
    .execute();
  return id;
}

/** Resolves a cookie value to a live session, reading the role from the account row; expired sessions are deleted. */
export async function resolveSession(deps: Deps, cookieValue: string): Promise<SessionContext | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(cookieValue)) return undefined;
  const idHash = sha256(cookieValue);
  const row = await deps.db
    .selectFrom('sessions')
    .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
    .select([
      'sessions.stage',
      'sessions.public_id',
      'sessions.csrf_token',
      'sessions.last_seen_at',
      'sessions.expires_at',
      'accounts.id',
      'accounts.username',
      'accounts.role',
      'accounts.totp_enabled',
    ])
    .where('sessions.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const now = deps.clock.now();
  if (now >= row.expires_at || now >= row.last_seen_at + SESSION_IDLE_MS) {
    await deps.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
    return undefined;
  }
  if (now - row.last_seen_at >= TOUCH_EVERY_MS) {
    await deps.db.updateTable('sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
  }
  return {
    idHash,
    publicId: row.public_id,
    stage: row.stage,
    csrfToken: row.csrf_token,
    account: { id: row.id, username: row.username, role: row.role, totp_enabled: row.totp_enabled },
  };
}

/** Moves a pending session to fully signed in, with the full absolute lifetime from now. */
export async function promoteSession(deps: Deps, idHash: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .updateTable('sessions')
    .set({ stage: 'full', last_seen_at: now, expires_at: now + SESSION_ABSOLUTE_MS })
    .where('id_hash', '=', idHash)
    .execute();
}

/** Ends one session. */
export async function endSession(deps: Deps, idHash: string): Promise<void> {
  await deps.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** One of an account's live sessions as its owner sees it: no cookie, no hash. */
export interface OwnSession {
  publicId: string;
  stage: Stage;
  createdAt: number;
  lastSeenAt: number;
  userAgent: string;
  /** The session making this request. */
  current: boolean;
}

/** The account's live sessions (not expired, not idle too long), newest first. */
export async function listOwnSessions(deps: Deps, accountId: string, currentIdHash: string): Promise<OwnSession[]> {
  const now = deps.clock.now();
  const rows = await deps.db
    .selectFrom('sessions')
    .select(['id_hash', 'public_id', 'stage', 'created_at', 'last_seen_at', 'user_agent'])
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .where('last_seen_at', '>', now - SESSION_IDLE_MS)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => ({
    publicId: r.public_id,
    stage: r.stage,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    userAgent: r.user_agent,
    current: r.id_hash === currentIdHash,
  }));
}

/** Ends one of the account's own sessions by its public id; a foreign or stale id is a no-op. Returns whether one ended. */
export async function endOwnSession(deps: Deps, accountId: string, publicId: string): Promise<boolean> {
  const result = await deps.db
    .deleteFrom('sessions')
    .where('public_id', '=', publicId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Ends every session of the account except the one given (after a password change). */
export async function endOtherSessions(db: Kysely<DB> | Transaction<DB>, accountId: string, keepIdHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('account_id', '=', accountId).where('id_hash', '!=', keepIdHash).execute();
}

/** Deletes sessions past their absolute or idle end (housekeeping; lookups already refuse them). */
export async function pruneSessions(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - SESSION_IDLE_MS)]))
    .execute();
}

// Server-side sessions: the cookie carries a 256-bit random id, the database only its SHA-256.
import type { Kysely, Transaction } from 'kysely';
import type { DB, SessionsTable } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { newId, randomToken, sha256 } from '../../deps.ts';
import { recordSignIn, type Account } from './accounts.repo.ts';

/** A signed-in session ends after this long without a request. */
const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** A session ends this long after sign-in, whatever the activity. */
const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** A half-signed-in session (owing a second factor or offered enrolment) lasts this long. */
const SESSION_PENDING_MS = 10 * 60 * 1000;
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

/**
 * How a session opened through single sign-on was opened: the provider, the verified `sub`, the provider's session id
 * (`sid`, when the id_token carried one) and the id_token, kept as the hint for signing out at the provider.
 */
export interface SessionOrigin {
  providerId: string;
  sub: string;
  sid: string | undefined;
  idToken: string;
}

/**
 * The stage a session starts in after a verified first factor (password or SSO): the second-factor step when the
 * account owes one (it has TOTP or a passkey: `owesSecondFactor`, decided by the second-factor feature).
 */
export function stageAfterFirstFactor(account: Pick<Account, 'totp_enrol_prompt'>, owesSecondFactor: boolean): Stage {
  if (owesSecondFactor) return 'totp';
  // First sign-in, or the first after an admin re-enrolment: walk through enrolment (skippable).
  return account.totp_enrol_prompt === 1 ? 'enrol' : 'full';
}

/**
 * Starts a fresh session (a new id at every sign-in) and returns the cookie value. `credentialsVersion` is the
 * account's credentials_version read together with the password hash that was just verified, so a sign-in racing a
 * password change cannot outlive it; without it (SSO) the current version is used. `origin` is given for a sign-in
 * through single sign-on, and stays with the session through its second-factor step.
 */
export async function createSession(
  deps: Deps,
  accountId: string,
  stage: Stage,
  userAgent: string,
  credentialsVersion?: number,
  origin?: SessionOrigin,
): Promise<string> {
  const id = randomToken(deps.random, 32);
  const now = deps.clock.now();
  const version = credentialsVersion ?? (await currentCredentialsVersion(deps.db, accountId));
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
      credentials_version: version,
      ...(origin
        ? {
            sso_provider_id: origin.providerId,
            sso_sub: origin.sub,
            sso_sid: origin.sid ?? null,
            sso_id_token: origin.idToken,
          }
        : {}),
    })
    .execute();
  if (stage === 'full') await recordSignIn(deps.db, accountId, now);
  return id;
}

/**
 * Resolves a cookie value to a live session, reading the role from the account row. Sessions past their end, or
 * created before the account's last password change (except the one that made it), are deleted.
 */
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
      'sessions.credentials_version as session_version',
      'accounts.credentials_version as account_version',
      'accounts.id',
      'accounts.username',
      'accounts.role',
      'accounts.totp_enabled',
      'accounts.suspended_at',
    ])
    .where('sessions.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const now = deps.clock.now();
  // A suspended account's sessions are deleted when it is suspended; one that survived a race ends here.
  const ended =
    now >= row.expires_at || now >= row.last_seen_at + SESSION_IDLE_MS || row.session_version < row.account_version;
  if (ended || row.suspended_at !== null) {
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

/**
 * Moves a pending session to fully signed in under a NEW id (and form token and public id), with the full absolute
 * lifetime from now: the old row is deleted in the same transaction, so an id seen while half signed in is worthless.
 * Returns the new cookie value and session, or undefined when the pending session no longer exists.
 */
export async function promoteSession(
  deps: Deps,
  session: SessionContext,
): Promise<{ cookie: string; session: SessionContext } | undefined> {
  const cookie = randomToken(deps.random, 32);
  const fresh = { idHash: sha256(cookie), publicId: newId(deps.random), csrfToken: randomToken(deps.random, 32) };
  const now = deps.clock.now();
  const promoted = await deps.db.transaction().execute(async (trx) => {
    const q = trx.selectFrom('sessions').selectAll().where('id_hash', '=', session.idHash);
    const old = await (deps.dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
    if (!old) return false;
    await trx.deleteFrom('sessions').where('id_hash', '=', session.idHash).execute();
    await trx
      .insertInto('sessions')
      .values({
        ...old,
        id_hash: fresh.idHash,
        public_id: fresh.publicId,
        csrf_token: fresh.csrfToken,
        stage: 'full',
        last_seen_at: now,
        expires_at: now + SESSION_ABSOLUTE_MS,
      })
      .execute();
    await recordSignIn(trx, old.account_id, now);
    return true;
  });
  return promoted ? { cookie, session: { ...session, ...fresh, stage: 'full' } } : undefined;
}

/** The account's current credentials version (0 for an unknown account, whose session insert then fails). */
async function currentCredentialsVersion(db: Kysely<DB> | Transaction<DB>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select('credentials_version')
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row?.credentials_version ?? 0;
}

/** Ends one session. */
export async function endSession(deps: Deps, idHash: string): Promise<void> {
  await deps.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** How one session was opened through single sign-on (read before it ends), or undefined for a password session. */
export async function sessionOrigin(deps: Deps, idHash: string): Promise<SessionOrigin | undefined> {
  const row = await deps.db
    .selectFrom('sessions')
    .select(['sso_provider_id', 'sso_sub', 'sso_sid', 'sso_id_token'])
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row?.sso_provider_id || row.sso_sub === null || row.sso_id_token === null) return undefined;
  return {
    providerId: row.sso_provider_id,
    sub: row.sso_sub,
    sid: row.sso_sid ?? undefined,
    idToken: row.sso_id_token,
  };
}

/**
 * Which sessions opened through a provider to end: those of one `sub` (optionally of one account), or those opened in
 * one provider session `sid`. With both, the sessions of that `sub` opened in that provider session or in one the
 * provider did not name (its id_token carried no `sid`). `exceptIdHash` spares one session.
 */
export interface OpenedThrough {
  providerId: string;
  sub?: string;
  sid?: string;
  accountId?: string;
  exceptIdHash?: string;
}

/**
 * Ends the sessions a provider opened that `which` names, pending sign-ins included; password sessions are never
 * touched. Names neither `sub` nor `sid`: nothing ends. Returns how many ended.
 */
export async function endSessionsOpenedThrough(
  db: Kysely<DB> | Transaction<DB>,
  which: OpenedThrough,
): Promise<number> {
  if (which.sub === undefined && which.sid === undefined) return 0;
  let q = db.deleteFrom('sessions').where('sso_provider_id', '=', which.providerId);
  if (which.sub !== undefined) q = q.where('sso_sub', '=', which.sub);
  const sid = which.sid;
  if (sid !== undefined && which.sub !== undefined)
    q = q.where((eb) => eb.or([eb('sso_sid', '=', sid), eb('sso_sid', 'is', null)]));
  else if (sid !== undefined) q = q.where('sso_sid', '=', sid);
  if (which.accountId !== undefined) q = q.where('account_id', '=', which.accountId);
  if (which.exceptIdHash !== undefined) q = q.where('id_hash', '!=', which.exceptIdHash);
  const result = await q.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** One of an account's live sessions as its owner sees it: no cookie, no hash. */
export interface OwnSession {
  publicId: string;
  stage: Stage;
  createdAt: number;
  lastSeenAt: number;
  userAgent: string;
  /** The single sign-on provider whose sign-in opened it; null for a password sign-in. */
  providerId: string | null;
  /** The session making this request. */
  current: boolean;
}

/** The account's live sessions (not expired, not idle too long), newest first. */
export async function listOwnSessions(deps: Deps, accountId: string, currentIdHash: string): Promise<OwnSession[]> {
  const now = deps.clock.now();
  const rows = await deps.db
    .selectFrom('sessions')
    .select(['id_hash', 'public_id', 'stage', 'created_at', 'last_seen_at', 'user_agent', 'sso_provider_id'])
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
    providerId: r.sso_provider_id,
    current: r.id_hash === currentIdHash,
  }));
}

/**
 * Ends one of the account's own sessions by its public id; a foreign or stale id is a no-op. Returns whether one ended.
 */
export async function endOwnSession(deps: Deps, accountId: string, publicId: string): Promise<boolean> {
  const result = await deps.db
    .deleteFrom('sessions')
    .where('public_id', '=', publicId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Ends every session of the account except the one given (after a password change). */
export async function endOtherSessions(
  db: Kysely<DB> | Transaction<DB>,
  accountId: string,
  keepIdHash: string,
): Promise<void> {
  await db.deleteFrom('sessions').where('account_id', '=', accountId).where('id_hash', '!=', keepIdHash).execute();
}

/** Ends every session of the account, pending sign-ins included (their enrolments go with them). */
export async function endAccountSessions(db: Kysely<DB> | Transaction<DB>, accountId: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Ends every session a provider opened (it was disabled, or its issuer or client id changed: its logout tokens would no
 * longer be accepted, so the provider could not end them), pending sign-ins included. Returns how many ended.
 */
export async function endProviderSessions(db: Kysely<DB> | Transaction<DB>, providerId: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('sso_provider_id', '=', providerId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes sessions past their absolute or idle end (housekeeping; lookups already refuse them). */
export async function pruneSessions(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - SESSION_IDLE_MS)]))
    .execute();
}

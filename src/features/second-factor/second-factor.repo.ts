// Plain data access for the second factor: the TOTP columns of accounts, pending enrolments and recovery codes.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** Stores (or replaces) the session's not-yet-confirmed secret. A session deleted meanwhile fails its foreign key. */
export async function savePendingEnrolment(
  db: Q,
  row: { sessionIdHash: string; secret: string; now: number; expiresAt: number },
): Promise<void> {
  const values = { secret: row.secret, created_at: row.now, expires_at: row.expiresAt };
  await db
    .insertInto('totp_enrolments')
    .values({ session_id_hash: row.sessionIdHash, ...values })
    .onConflict((oc) => oc.column('session_id_hash').doUpdateSet(values))
    .execute();
}

/** The session's pending secret, if it has one that has not expired and the session belongs to the account. */
export async function findPendingEnrolment(
  db: Q,
  sessionIdHash: string,
  accountId: string,
  now: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('totp_enrolments')
    .innerJoin('sessions', 'sessions.id_hash', 'totp_enrolments.session_id_hash')
    .select('totp_enrolments.secret')
    .where('totp_enrolments.session_id_hash', '=', sessionIdHash)
    .where('sessions.account_id', '=', accountId)
    .where('totp_enrolments.expires_at', '>', now)
    .executeTakeFirst();
  return row?.secret;
}

/** Consumes the session's pending secret if it is still `secret`. Returns whether this call took it. */
export async function takePendingEnrolment(db: Q, sessionIdHash: string, secret: string): Promise<boolean> {
  const r = await db
    .deleteFrom('totp_enrolments')
    .where('session_id_hash', '=', sessionIdHash)
    .where('secret', '=', secret)
    .executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Drops every pending enrolment of the account's sessions (once TOTP is on, they can never complete). */
export async function deletePendingEnrolments(db: Q, accountId: string): Promise<void> {
  await db
    .deleteFrom('totp_enrolments')
    .where('session_id_hash', 'in', (eb) =>
      eb.selectFrom('sessions').select('id_hash').where('account_id', '=', accountId),
    )
    .execute();
}

/** Deletes expired pending enrolments (housekeeping; lookups already ignore them). */
export async function deleteExpiredEnrolments(db: Q, now: number): Promise<void> {
  await db.deleteFrom('totp_enrolments').where('expires_at', '<=', now).execute();
}

/**
 * Turns TOTP on with the confirmed secret, only while it is off, recording the confirming step. Returns whether it did.
 */
export async function enableTotp(db: Q, accountId: string, secret: string, step: number): Promise<boolean> {
  const r = await db
    .updateTable('accounts')
    .set({ totp_secret: secret, totp_enabled: 1, totp_last_step: step, totp_enrol_prompt: 0 })
    .where('id', '=', accountId)
    .where('totp_enabled', '=', 0)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Records `step` as the last accepted one only if it is newer than the stored one: the single guard against
 * replays. Racing submissions of one code both reach this UPDATE; the row lock (PostgreSQL) or the single writer
 * (SQLite) makes the second see the first's step, so exactly one changes a row.
 */
export async function acceptTotpStep(db: Q, accountId: string, secret: string, step: number): Promise<boolean> {
  const r = await db
    .updateTable('accounts')
    .set({ totp_last_step: step })
    .where('id', '=', accountId)
    .where('totp_enabled', '=', 1)
    .where('totp_secret', '=', secret)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Clears the "walk through enrolment at sign-in" flag, only while TOTP is off. Returns whether TOTP is off. */
export async function clearEnrolPrompt(db: Q, accountId: string): Promise<boolean> {
  const r = await db
    .updateTable('accounts')
    .set({ totp_enrol_prompt: 0 })
    .where('id', '=', accountId)
    .where('totp_enabled', '=', 0)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Replaces the account's recovery codes with a new set (the old ones stop working). */
export async function replaceRecoveryCodes(
  db: Q,
  accountId: string,
  rows: { id: string; code_hash: string }[],
  now: number,
): Promise<void> {
  await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
  await db
    .insertInto('recovery_codes')
    .values(rows.map((r) => ({ ...r, account_id: accountId, used_at: null, created_at: now })))
    .execute();
}

/** Deletes the account's recovery codes (its last second factor went). */
export async function deleteRecoveryCodes(db: Q, accountId: string): Promise<void> {
  await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
}

/** The account's unused recovery codes (id and hash). */
export function unusedRecoveryCodes(db: Q, accountId: string) {
  return db
    .selectFrom('recovery_codes')
    .select(['id', 'code_hash'])
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .execute();
}

/** How many unused recovery codes the account has. */
export async function countUnusedRecoveryCodes(db: Q, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Marks a recovery code used, only if it still is unused. Returns whether this call spent it. */
export async function spendRecoveryCode(db: Q, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

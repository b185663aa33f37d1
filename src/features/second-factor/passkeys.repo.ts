// Plain data access for passkeys (WebAuthn credentials) and the challenges their ceremonies answer.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, PasskeysTable, WebauthnChallengesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

export type PasskeyRow = Selectable<PasskeysTable>;

/** Stores a newly registered credential. A credential id already registered (to any account) fails its unique key. */
export async function insertPasskey(db: Q, row: PasskeyRow): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

/** An account's passkeys, oldest first. */
export async function listPasskeys(db: Q, accountId: string): Promise<PasskeyRow[]> {
  const rows = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(parsed);
}

/** The credential with this id, whichever account holds it. */
export async function findPasskeyByCredentialId(db: Q, credentialId: string): Promise<PasskeyRow | undefined> {
  const r = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  return r && parsed(r);
}

/** One of the account's passkeys by its row id (another account's id finds nothing). */
export async function findOwnPasskey(db: Q, accountId: string, id: string): Promise<PasskeyRow | undefined> {
  const r = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return r && parsed(r);
}

/** Renames one of the account's passkeys; returns whether it did (a foreign or stale id changes nothing). */
export async function renamePasskey(db: Q, accountId: string, id: string, name: string): Promise<boolean> {
  const r = await db
    .updateTable('passkeys')
    .set({ name })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Deletes one of the account's passkeys; returns whether it did (a foreign or stale id changes nothing). */
export async function deleteOwnPasskey(db: Q, accountId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('passkeys').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/**
 * Records a use: the new signature counter and the time, only if the counter moved forward (or both the stored and the
 * new one are 0: an authenticator that keeps no counter). Returns whether it did; false when another use got there
 * first with the same or a later counter.
 */
export async function recordPasskeyUse(
  db: Q,
  id: string,
  use: { counter: number; backedUp: boolean; now: number },
): Promise<boolean> {
  const r = await db
    .updateTable('passkeys')
    .set({ counter: use.counter, backed_up: use.backedUp ? 1 : 0, last_used_at: use.now })
    .where('id', '=', id)
    .where((eb) => (use.counter === 0 ? eb('counter', '=', 0) : eb('counter', '<', use.counter)))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Holds a fresh challenge for an owner and purpose, replacing the owner's earlier one of that purpose. */
export async function saveChallenge(db: Q, row: WebauthnChallengesTable): Promise<void> {
  const { challenge, expires_at } = row;
  await db
    .insertInto('webauthn_challenges')
    .values(row)
    .onConflict((oc) => oc.columns(['owner_hash', 'purpose']).doUpdateSet({ challenge, expires_at }))
    .execute();
}

/**
 * Takes (deletes) the owner's challenge of this purpose and returns it if it had not expired: one answer per challenge,
 * whichever of two racing answers deletes the row first.
 */
export async function takeChallenge(
  db: Q,
  ownerHash: string,
  purpose: WebauthnChallengesTable['purpose'],
  now: number,
): Promise<string | undefined> {
  const row = await db
    .deleteFrom('webauthn_challenges')
    .where('owner_hash', '=', ownerHash)
    .where('purpose', '=', purpose)
    .returning(['challenge', 'expires_at'])
    .executeTakeFirst();
  return row && Number(row.expires_at) > now ? row.challenge : undefined;
}

/** How many challenges of this purpose are live (not expired) now. */
export async function countLiveChallenges(
  db: Q,
  purpose: WebauthnChallengesTable['purpose'],
  now: number,
): Promise<number> {
  const r = await db
    .selectFrom('webauthn_challenges')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('purpose', '=', purpose)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Deletes expired challenges (housekeeping; taking one already refuses it). */
export async function deleteExpiredChallenges(db: Q, now: number): Promise<void> {
  await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).execute();
}

/** Deletes every passkey of an account (re-enrolment); returns how many went. */
export async function deletePasskeys(db: Q, accountId: string): Promise<number> {
  const r = await db.deleteFrom('passkeys').where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** A row as read, its bigint columns as numbers (PostgreSQL returns them as strings). */
function parsed(r: PasskeyRow): PasskeyRow {
  return {
    ...r,
    counter: Number(r.counter),
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
  };
}

/** How many passkeys each of these accounts holds (accounts with none are absent). */
export async function countPasskeys(db: Q, accountIds: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (accountIds.length === 0) return counts;
  const rows = await db
    .selectFrom('passkeys')
    .select(['account_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('account_id', 'in', accountIds)
    .groupBy('account_id')
    .execute();
  for (const r of rows) counts.set(r.account_id, Number(r.n));
  return counts;
}

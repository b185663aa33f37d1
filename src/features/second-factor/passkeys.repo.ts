// Plain data access for passkeys (WebAuthn credentials) and the challenges their ceremonies answer.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, PasskeysTable } from '../../db/schema.ts';

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
  return rows.map((r) => ({
    ...r,
    counter: Number(r.counter),
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
  }));
}

/** The credential with this id, whichever account holds it. */
export async function findPasskeyByCredentialId(db: Q, credentialId: string): Promise<PasskeyRow | undefined> {
  const r = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
  if (!r) return undefined;
  return {
    ...r,
    counter: Number(r.counter),
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
  };
}

/** Deletes every passkey of an account (re-enrolment); returns how many went. */
export async function deletePasskeys(db: Q, accountId: string): Promise<number> {
  const r = await db.deleteFrom('passkeys').where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows);
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

// Rows the team tests need that no form makes directly (a form would need a session and its one-time token).
import type { DB } from '../../src/db/schema.ts';
import { buildTestApp, type TestApp, type TestClient } from './app.ts';
import type { TestDatabase } from './db.ts';
import { signedInAs } from './factories.ts';
import { newId, randomToken, sha256, systemRandom } from '../../src/deps.ts';
import { insertPasskey, type PasskeyRow } from '../../src/features/second-factor/passkeys.repo.ts';

/** Inserts an open invitation authored by `createdBy` (a `created_by` row that keeps its author from being removed). */
export async function buildInvitation(t: TestApp, createdBy: string): Promise<string> {
  const id = newId(systemRandom);
  const now = t.clock.now();
  await t.deps.db
    .insertInto('invitations')
    .values({
      id,
      token_hash: sha256(randomToken(systemRandom, 32)),
      role: 'viewer',
      created_at: now,
      expires_at: now + 60_000,
      spent_at: null,
      revoked_at: null,
      created_by: createdBy,
    })
    .execute();
  return id;
}

/**
 * Stores `count` passkeys of the account as a registration would (a random credential id and a stand-in public key,
 * never verified here); returns their rows, so a test can check that neither ever shows.
 */
export async function buildPasskeys(t: TestApp, accountId: string, count: number): Promise<PasskeyRow[]> {
  const rows: PasskeyRow[] = [];
  for (let n = 1; n <= count; n++) {
    const row: PasskeyRow = {
      id: newId(systemRandom),
      account_id: accountId,
      credential_id: randomToken(systemRandom, 32),
      public_key: randomToken(systemRandom, 77),
      counter: 0,
      transports: 'internal',
      device_type: 'multiDevice',
      backed_up: 1,
      name: `Passkey ${n}`,
      created_at: t.clock.now(),
      last_used_at: null,
    };
    await insertPasskey(t.deps.db, row);
    rows.push(row);
  }
  return rows;
}

/** How many passkeys the account holds. */
export async function passkeysOf(t: TestApp, accountId: string): Promise<number> {
  return (await t.deps.db.selectFrom('passkeys').select('id').where('account_id', '=', accountId).execute()).length;
}

/**
 * A fresh app over `tdb` with the given tables emptied first (the database is shared by a file's tests), and a browser
 * signed in as a new admin.
 */
export async function startAsAdmin(
  tdb: TestDatabase,
  tables: readonly (keyof DB)[],
): Promise<{ t: TestApp; admin: TestClient; adminId: string }> {
  for (const table of tables) await tdb.db.deleteFrom(table).execute();
  const t = buildTestApp(tdb);
  const signed = await signedInAs(t, 'admin');
  return { t, admin: signed.client, adminId: signed.account.id };
}

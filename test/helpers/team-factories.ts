// Rows the team tests need that no form makes directly (a form would need a session and its one-time token).
import type { DB } from '../../src/db/schema.ts';
import { buildTestApp, type TestApp, type TestClient } from './app.ts';
import type { TestDatabase } from './db.ts';
import { signedInAs } from './factories.ts';
import { newId, randomToken, sha256, systemRandom } from '../../src/deps.ts';

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

// Frozen: look-alike usernames. accounts.username_skeleton holds each name's UTS #39 confusable
// skeleton under a unique index, so the database refuses "аdmin" (Cyrillic а) beside "admin", race-free.
// Existing accounts are backfilled oldest first; when two already share a skeleton, the older keeps it and each newer
// one is left NULL (a unique index allows many NULLs), so the migration never fails and no account is changed
// otherwise.
import type { Kysely } from 'kysely';
import { rectifyConfusion } from 'unicode-confusables';

// One UTS #39 skeleton pass (NFD, confusables.txt prototypes, NFD), as in lookalike.ts.
function pass(value: string): string {
  return rectifyConfusion(value.normalize('NFD')).normalize('NFD');
}

// A frozen copy of usernameSkeleton() as of this migration (migrations never import application code): case and
// confusables both fold (NFKC, skeleton, upper case, skeleton, lower case, skeleton).
function skeleton(username: string): string {
  return pass(pass(pass(username.normalize('NFKC')).toUpperCase()).toLowerCase());
}

// Adds the column and the unique index, then fills the column oldest account first, skipping taken skeletons.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('username_skeleton', 'text').execute();
  await db.schema
    .createIndex('accounts_username_skeleton')
    .unique()
    .on('accounts')
    .column('username_skeleton')
    .execute();
  const rows = await db.selectFrom('accounts').select(['id', 'username']).orderBy('created_at').orderBy('id').execute();
  const taken = new Set<string>();
  for (const row of rows as { id: string; username: string }[]) {
    const key = skeleton(row.username);
    if (taken.has(key)) continue;
    taken.add(key);
    await db.updateTable('accounts').set({ username_skeleton: key }).where('id', '=', row.id).execute();
  }
}

// Drops the index and the column; nothing else depends on them.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('accounts_username_skeleton').execute();
  await db.schema.alterTable('accounts').dropColumn('username_skeleton').execute();
}

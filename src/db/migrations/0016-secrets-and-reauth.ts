// Frozen: invitation notes and host-minted invitations, and re-authentication within a session.
// - invitations.note: an optional label shown only in the admin's list of open invitations; it binds nothing.
// - invitations.created_by becomes nullable: NULL means minted from the host command line (`svc invite`). The
//   reference to accounts keeps refusing the removal of an account that authored invitations. SQLite cannot drop a
//   NOT NULL constraint, so there the table is rebuilt (nothing references invitations; its only index is the
//   token_hash unique constraint, recreated with the table).
// - sessions.reauthed_at: when this session last re-typed its password (or a second-factor code).
import { PostgresAdapter, sql, type Kysely } from 'kysely';

const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** The invitation columns as of this migration, in table order; `note` is handled by the caller. */
const COLUMNS = ['id', 'token_hash', 'role', 'created_at', 'expires_at', 'spent_at', 'revoked_at', 'created_by'];

/** SQLite: rebuilds invitations with created_by nullable (and with a note column) or NOT NULL (and without one). */
async function rebuildInvitations(db: Kysely<any>, nullableAuthor: boolean): Promise<void> {
  await db.schema
    .createTable('invitations_rebuilt')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'viewer')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('spent_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    // Authorship: no cascade, so removing an author is refused by the database.
    .addColumn('created_by', 'text', (c) => {
      const ref = c.references('accounts.id').onDelete('no action');
      return nullableAuthor ? ref : ref.notNull();
    })
    .$call((b) => (nullableAuthor ? b.addColumn('note', 'text') : b))
    .execute();
  const columns = sql.join(COLUMNS.map((name) => sql.ref(name)));
  const source = nullableAuthor
    ? sql`select ${columns} from invitations`
    : sql`select ${columns} from invitations where created_by is not null`;
  await sql`insert into invitations_rebuilt (${columns}) ${source}`.execute(db);
  await db.schema.dropTable('invitations').execute();
  await db.schema.alterTable('invitations_rebuilt').renameTo('invitations').execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await db.schema
      .alterTable('invitations')
      .alterColumn('created_by', (c) => c.dropNotNull())
      .execute();
    await db.schema.alterTable('invitations').addColumn('note', 'text').execute();
  } else {
    await rebuildInvitations(db, true);
  }
  await db.schema.alterTable('sessions').addColumn('reauthed_at', 'bigint').execute();
}

// Host-minted invitations (no author) cannot survive the NOT NULL constraint: they are dropped.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('reauthed_at').execute();
  if (isPostgres(db)) {
    await db.deleteFrom('invitations').where('created_by', 'is', null).execute();
    await db.schema
      .alterTable('invitations')
      .alterColumn('created_by', (c) => c.setNotNull())
      .execute();
    await db.schema.alterTable('invitations').dropColumn('note').execute();
  } else {
    await rebuildInvitations(db, false);
  }
}

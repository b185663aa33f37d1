// Frozen: pending TOTP enrolments bound to the session that passed the password check, credentials versions
// (sessions made before the last password change stop working), and escalating locks for code throttles.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // A pending enrolment belongs to one session and ends with it (sign-out, expiry, rotation, account removal).
  await db.schema
    .createTable('totp_enrolments')
    .addColumn('session_id_hash', 'text', (c) => c.primaryKey().references('sessions.id_hash').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  // Pending secrets used to sit on the account row, readable by every session of the account: drop them.
  await db
    .updateTable('accounts')
    .set({ totp_secret: null, totp_last_step: null })
    .where('totp_enabled', '=', 0)
    .execute();

  // Bumped by every password change; a session remembers the version it was created under.
  await db.schema
    .alterTable('accounts')
    .addColumn('credentials_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('credentials_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  // Consecutive locks of an escalating throttle key (second-factor codes): each lock lasts twice the one before.
  await db.schema
    .alterTable('auth_throttle')
    .addColumn('locks', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Until when a counter can still change a decision; housekeeping deletes it afterwards. Existing counters all
  // had 15-minute windows and locks.
  await db.schema
    .alterTable('auth_throttle')
    .addColumn('keep_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db
    .updateTable('auth_throttle')
    .set((eb) => ({ keep_until: eb('window_started_at', '+', 15 * 60_000) }))
    .execute();
  await db
    .updateTable('auth_throttle')
    .set((eb) => ({ keep_until: eb.ref('locked_until') }))
    .whereRef('locked_until', '>', 'keep_until')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_throttle').dropColumn('keep_until').execute();
  await db.schema.alterTable('auth_throttle').dropColumn('locks').execute();
  await db.schema.alterTable('sessions').dropColumn('credentials_version').execute();
  await db.schema.alterTable('accounts').dropColumn('credentials_version').execute();
  await db.schema.dropTable('totp_enrolments').execute();
}

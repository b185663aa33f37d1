// Runs the one migration set on either dialect; never throws, returns what happened.
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './migrations/0001-foundation.ts';
import * as m0002 from './migrations/0002-outbox.ts';
import * as m0004 from './migrations/0004-profile.ts';
import * as m0005 from './migrations/0005-sso.ts';
import * as m0006 from './migrations/0006-messages.ts';
import * as m0008 from './migrations/0008-second-factor-hardening.ts';
import * as m0009 from './migrations/0009-delivery-due-pending.ts';
import * as m0010 from './migrations/0010-delivery-attempt-log.ts';
import * as m0011 from './migrations/0011-delivery-attempt-rows.ts';
import * as m0013 from './migrations/0013-username-skeleton.ts';
import * as m0014 from './migrations/0014-session-reveals.ts';
import * as m0015 from './migrations/0015-account-lifecycle.ts';
import * as m0016 from './migrations/0016-secrets-and-reauth.ts';
import * as m0017 from './migrations/0017-channel-failing-since.ts';
import * as m0018 from './migrations/0018-api.ts';
import * as m0019 from './migrations/0019-sso-spent-states.ts';
import * as m0020 from './migrations/0020-passkeys.ts';
import * as m0021 from './migrations/0021-sso-client-auth.ts';
import * as m0022 from './migrations/0022-sso-logout.ts';

/** Every migration by name; tests take a prefix of them to start from an older schema. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-outbox': m0002,
  '0004-profile': m0004,
  '0005-sso': m0005,
  '0006-messages': m0006,
  '0008-second-factor-hardening': m0008,
  '0009-delivery-due-pending': m0009,
  '0010-delivery-attempt-log': m0010,
  '0011-delivery-attempt-rows': m0011,
  '0013-username-skeleton': m0013,
  '0014-session-reveals': m0014,
  '0015-account-lifecycle': m0015,
  '0016-secrets-and-reauth': m0016,
  '0017-channel-failing-since': m0017,
  '0018-api': m0018,
  '0019-sso-spent-states': m0019,
  '0020-passkeys': m0020,
  '0021-sso-client-auth': m0021,
  '0022-sso-logout': m0022,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export type MigrateResult = { ok: true; applied: string[] } | { ok: false; error: unknown };

/** Brings the schema up to date. On PostgreSQL, Kysely holds an advisory lock, so concurrent start-ups are safe. */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrateResult> {
  // Features land in parallel, so a later-named migration may be applied before an earlier-named one.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) return { ok: false, error };
  return { ok: true, applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

// Frozen: how svc authenticates to each provider's token endpoint.
// - client_auth_method: 'automatic' (the Basic header first, the request body once if the provider refuses the
//   header's credentials), or 'client_secret_basic' / 'client_secret_post' chosen by an administrator. Existing
//   providers become automatic, which starts exactly as before (the header whenever the provider lists it).
// - client_auth_learned, client_auth_learned_at: the method an automatic provider was found to accept after its first
//   choice was refused, and when; cleared whenever the issuer, client id, secret or setting changes.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sso_providers')
    .addColumn('client_auth_method', 'text', (c) =>
      c
        .notNull()
        .defaultTo('automatic')
        .check(sql`client_auth_method in ('automatic', 'client_secret_basic', 'client_secret_post')`),
    )
    .execute();
  await db.schema
    .alterTable('sso_providers')
    .addColumn('client_auth_learned', 'text', (c) =>
      c.check(sql`client_auth_learned in ('client_secret_basic', 'client_secret_post')`),
    )
    .execute();
  await db.schema.alterTable('sso_providers').addColumn('client_auth_learned_at', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sso_providers').dropColumn('client_auth_learned_at').execute();
  await db.schema.alterTable('sso_providers').dropColumn('client_auth_learned').execute();
  await db.schema.alterTable('sso_providers').dropColumn('client_auth_method').execute();
}

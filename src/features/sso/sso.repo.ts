// Plain data access for SSO providers, identity bindings and the flow-cookie key; no business rules here.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { DB, SsoIdentitiesTable, SsoProvidersTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

export type ProviderRow = Selectable<SsoProvidersTable>;
export type IdentityRow = SsoIdentitiesTable;

/** A binding joined with what the admin list shows beside it. */
export interface IdentityListing extends IdentityRow {
  provider_name: string;
  provider_slug: string;
  username: string;
}

/** Every provider, in display order. */
export function listProviders(db: Q): Promise<ProviderRow[]> {
  return db.selectFrom('sso_providers').selectAll().orderBy('display_name').orderBy('slug').execute();
}

/** Providers in display order (one when `id` is given), each with its author's username. */
export function listProvidersWithAuthors(db: Q, id?: string): Promise<(ProviderRow & { author: string | null })[]> {
  let q = db
    .selectFrom('sso_providers')
    .leftJoin('accounts', 'accounts.id', 'sso_providers.created_by')
    .selectAll('sso_providers')
    .select('accounts.username as author')
    .orderBy('sso_providers.display_name')
    .orderBy('sso_providers.slug');
  if (id !== undefined) q = q.where('sso_providers.id', '=', id);
  return q.execute();
}

/** The enabled providers, in display order (the sign-in buttons). */
export function listEnabledProviders(db: Q): Promise<ProviderRow[]> {
  return db
    .selectFrom('sso_providers')
    .selectAll()
    .where('enabled', '=', 1)
    .orderBy('display_name')
    .orderBy('slug')
    .execute();
}

export function findProviderBySlug(db: Q, slug: string): Promise<ProviderRow | undefined> {
  return db.selectFrom('sso_providers').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export function findProviderById(db: Q, id: string): Promise<ProviderRow | undefined> {
  return db.selectFrom('sso_providers').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * A provider re-read inside a transaction, its row locked until commit on PostgreSQL (SQLite transactions already
 * hold the single write lock): an issuer change and a binding insert for that provider then happen one after the other.
 */
export function lockProvider(trx: Transaction<DB>, dialect: Dialect, id: string): Promise<ProviderRow | undefined> {
  const q = trx.selectFrom('sso_providers').selectAll().where('id', '=', id);
  return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
}

/** Inserts a provider; a duplicate slug surfaces as a unique violation. */
export async function insertProvider(db: Q, row: ProviderRow): Promise<void> {
  await db.insertInto('sso_providers').values(row).execute();
}

/** Updates a provider's fields; returns how many rows matched (0 when it no longer exists). */
export async function updateProvider(
  db: Q,
  id: string,
  fields: Partial<
    Pick<
      ProviderRow,
      | 'display_name'
      | 'slug'
      | 'issuer'
      | 'client_id'
      | 'client_secret'
      | 'enabled'
      | 'sign_out_at_provider'
      | 'updated_at'
      | 'updated_at'
      | 'client_auth_method'
      | 'client_auth_learned'
      | 'client_auth_learned_at'
    >
  >,
): Promise<number> {
  const result = await db.updateTable('sso_providers').set(fields).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Records the client authentication method an automatic provider accepted, unless the provider was saved since `p`
 * was read or its client changed (a save forgets what was learned). Not an admin save: updated_at stays.
 */
export async function rememberClientAuth(
  db: Q,
  p: ProviderRow,
  method: NonNullable<ProviderRow['client_auth_learned']>,
  at: number,
): Promise<void> {
  await db
    .updateTable('sso_providers')
    .set({ client_auth_learned: method, client_auth_learned_at: at })
    .where('id', '=', p.id)
    .where('updated_at', '=', p.updated_at)
    .where('client_auth_method', '=', 'automatic')
    .where('client_id', '=', p.client_id)
    .where((eb) =>
      p.client_secret === null ? eb('client_secret', 'is', null) : eb('client_secret', '=', p.client_secret),
    )
    .execute();
}

/** Deletes a provider (its bindings go with it through the foreign key). */
export async function deleteProvider(db: Q, id: string): Promise<void> {
  await db.deleteFrom('sso_providers').where('id', '=', id).execute();
}

/** Deletes every binding made through a provider; returns how many there were. */
export async function deleteProviderIdentities(db: Q, providerId: string): Promise<number> {
  const result = await db.deleteFrom('sso_identities').where('provider_id', '=', providerId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The binding of a (provider, sub) pair verified at `issuer`, if the provider still has that issuer: one statement,
 * so an identity verified at an issuer the provider has since left never matches a binding made at the new one.
 */
export function findIdentityAtIssuer(
  db: Q,
  providerId: string,
  issuer: string,
  sub: string,
): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('sso_identities')
    .innerJoin('sso_providers', 'sso_providers.id', 'sso_identities.provider_id')
    .selectAll('sso_identities')
    .where('sso_identities.provider_id', '=', providerId)
    .where('sso_identities.sub', '=', sub)
    .where('sso_providers.issuer', '=', issuer)
    .executeTakeFirst();
}

/** The binding of a verified (provider, sub) pair, if any. */
export function findIdentity(db: Q, providerId: string, sub: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('sso_identities')
    .selectAll()
    .where('provider_id', '=', providerId)
    .where('sub', '=', sub)
    .executeTakeFirst();
}

/**
 * The binding of (provider, sub), read inside a transaction and, on PostgreSQL, share-locked until it ends: removing
 * it (unlink, an admin's removal, deleting the provider) waits for that transaction, and one that removed it first is
 * seen as gone.
 */
export function shareIdentity(
  trx: Transaction<DB>,
  dialect: Dialect,
  providerId: string,
  sub: string,
): Promise<IdentityRow | undefined> {
  const q = trx.selectFrom('sso_identities').selectAll().where('provider_id', '=', providerId).where('sub', '=', sub);
  return (dialect === 'postgres' ? q.forShare() : q).executeTakeFirst();
}

/** The provider, share-locked on PostgreSQL until the transaction ends: a change or deletion of it waits. */
export function shareProvider(trx: Transaction<DB>, dialect: Dialect, id: string): Promise<ProviderRow | undefined> {
  const q = trx.selectFrom('sso_providers').selectAll().where('id', '=', id);
  return (dialect === 'postgres' ? q.forShare() : q).executeTakeFirst();
}

/** An account's binding at one provider, if any. */
export function findAccountIdentity(db: Q, accountId: string, providerId: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('sso_identities')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
}

/** Inserts a binding; either unique index refusing it surfaces as a unique violation. */
export async function insertIdentity(db: Q, row: IdentityRow): Promise<void> {
  await db.insertInto('sso_identities').values(row).execute();
}

/** Deletes a binding by id, only when it belongs to `accountId` (when given); returns the row deleted, if any. */
export async function deleteIdentity(db: Q, id: string, accountId?: string): Promise<IdentityRow | undefined> {
  let q = db.deleteFrom('sso_identities').where('id', '=', id);
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  return q.returningAll().executeTakeFirst();
}

/** Bindings joined with their provider's and account's names (an IdentityListing each). */
function identityListings(db: Q) {
  return db
    .selectFrom('sso_identities')
    .innerJoin('sso_providers', 'sso_providers.id', 'sso_identities.provider_id')
    .innerJoin('accounts', 'accounts.id', 'sso_identities.account_id')
    .selectAll('sso_identities')
    .select([
      'sso_providers.display_name as provider_name',
      'sso_providers.slug as provider_slug',
      'accounts.username',
    ]);
}

/** Bindings with provider and account names, optionally for one account. */
export function listIdentities(db: Q, accountId?: string): Promise<IdentityListing[]> {
  let q = identityListings(db).orderBy('sso_providers.display_name').orderBy('accounts.username_lower');
  if (accountId !== undefined) q = q.where('sso_identities.account_id', '=', accountId);
  return q.execute();
}

/** Where a page of bindings starts: after the binding with this linked-at time and id (newest first). */
export interface IdentityKey {
  linkedAt: number;
  id: string;
}

/** Up to `limit` bindings newest first (linked-at, then id), after `after`, optionally of one provider or account. */
export function listIdentitiesPage(
  db: Q,
  filter: { providerId?: string; accountId?: string; after?: IdentityKey; limit: number },
): Promise<IdentityListing[]> {
  let q = identityListings(db)
    .orderBy('sso_identities.linked_at', 'desc')
    .orderBy('sso_identities.id', 'desc')
    .limit(filter.limit);
  if (filter.providerId !== undefined) q = q.where('sso_identities.provider_id', '=', filter.providerId);
  if (filter.accountId !== undefined) q = q.where('sso_identities.account_id', '=', filter.accountId);
  const after = filter.after;
  if (after !== undefined) {
    q = q.where((eb) =>
      eb.or([
        eb('sso_identities.linked_at', '<', after.linkedAt),
        eb.and([eb('sso_identities.linked_at', '=', after.linkedAt), eb('sso_identities.id', '<', after.id)]),
      ]),
    );
  }
  return q.execute();
}

/** How many bindings each provider has (providers without any are absent). */
export async function countIdentitiesByProvider(db: Q): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('sso_identities')
    .select((eb) => ['provider_id', eb.fn.countAll<number | string>().as('n')])
    .groupBy('provider_id')
    .execute();
  return new Map(rows.map((r) => [r.provider_id, Number(r.n)]));
}

/** Stores a meta value unless one is already there, then returns the stored one (first writer wins). */
export async function metaInsertIfAbsent(db: Q, key: string, value: string): Promise<string> {
  await db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

/** Records a flow's state hash as spent until `expiresAt`; false when it already was (first writer wins). */
export async function insertSpentState(db: Q, stateHash: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('sso_spent_states')
    .values({ state_hash: stateHash, expires_at: expiresAt })
    .onConflict((oc) => oc.column('state_hash').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Deletes spent states whose flow has expired (a replay of one is refused as expired anyway); returns how many. */
export async function deleteExpiredSpentStates(db: Q, now: number): Promise<number> {
  const result = await db.deleteFrom('sso_spent_states').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Records a back-channel logout token's `jti` hash for the provider until `expiresAt`; false when it was already
 * recorded (a replay; first writer wins).
 */
export async function insertLogoutJti(db: Q, providerId: string, jtiHash: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('sso_logout_jtis')
    .values({ provider_id: providerId, jti_hash: jtiHash, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['provider_id', 'jti_hash']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Deletes recorded `jti`s whose tokens are too old to be accepted anyway; returns how many. */
export async function deleteExpiredLogoutJtis(db: Q, now: number): Promise<number> {
  const result = await db.deleteFrom('sso_logout_jtis').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Stores a sign-out at the provider waiting for its browser, under the SHA-256 of the browser's handle. */
export async function insertSignOut(
  db: Q,
  row: { handle_hash: string; provider_id: string; url: string; expires_at: number },
): Promise<void> {
  await db.insertInto('sso_sign_outs').values(row).execute();
}

/** Takes (deletes and returns) the waiting sign-out with this handle hash, if any. */
export function takeSignOut(
  db: Q,
  handleHash: string,
): Promise<{ provider_id: string; url: string; expires_at: number } | undefined> {
  return db
    .deleteFrom('sso_sign_outs')
    .where('handle_hash', '=', handleHash)
    .returning(['provider_id', 'url', 'expires_at'])
    .executeTakeFirst();
}

/** Deletes waiting sign-outs no browser came for in time; returns how many. */
export async function deleteExpiredSignOuts(db: Q, now: number): Promise<number> {
  const result = await db.deleteFrom('sso_sign_outs').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Administration of providers and bindings. Uniqueness of slugs is the database's job; a refusal comes back typed.
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import { endProviderSessions, endSessionsOpenedThrough } from '../auth/sessions.service.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { checkDiscovery, type DiscoveryProblem } from './sso.discovery-check.ts';
import type {
  ClientAuthSetting,
  CreateProviderInput,
  ProviderChange,
  ProviderSecretInput,
  SecretMethod,
} from './sso.schema.ts';
import {
  countIdentitiesByProvider,
  deleteIdentity,
  deleteProvider,
  deleteProviderIdentities,
  findProviderById,
  insertProvider,
  listEnabledProviders,
  listIdentities,
  listIdentitiesPage,
  listProviders,
  listProvidersWithAuthors,
  lockProvider,
  updateProvider,
  type IdentityKey,
  type IdentityListing,
  type ProviderRow,
} from './sso.repo.ts';

/** A provider as pages may show it: the secret reduced to whether one is set. */
export interface ProviderView {
  id: string;
  display_name: string;
  slug: string;
  issuer: string;
  client_id: string;
  enabled: boolean;
  secretSet: boolean;
  createdAt: number;
  updatedAt: number;
  /** The account that declared it. */
  createdBy: string;
  /** Signing out of a session it opened also signs out at its end-session endpoint (when it names one). */
  signOutAtProvider: boolean;
  /** How svc sends the secret to the token endpoint (a public client sends none, whatever this says). */
  clientAuthMethod: ClientAuthSetting;
  /** The method an automatic provider was found to accept after the header was refused, and when. */
  clientAuthLearned?: { method: SecretMethod; at: number };
}

/** Drops the secret; the only shape in which providers leave the domain for a page. */
export function toProviderView(p: ProviderRow): ProviderView {
  return {
    id: p.id,
    display_name: p.display_name,
    slug: p.slug,
    issuer: p.issuer,
    client_id: p.client_id,
    enabled: p.enabled === 1,
    secretSet: p.client_secret !== null,
    createdAt: p.created_at,
    updatedAt: p.updated_at,
    createdBy: p.created_by,
    signOutAtProvider: p.sign_out_at_provider === 1,
    clientAuthMethod: p.client_auth_method,
    clientAuthLearned:
      p.client_auth_learned !== null && p.client_auth_learned_at !== null
        ? { method: p.client_auth_learned, at: p.client_auth_learned_at }
        : undefined,
  };
}

/** The enabled providers: sign-in buttons and profile Link buttons. */
export async function enabledProviders(deps: Deps): Promise<ProviderView[]> {
  return (await listEnabledProviders(deps.db)).map(toProviderView);
}

/** Every provider's display name by id (what a session list says it came through). */
export async function providerNames(deps: Deps): Promise<Map<string, string>> {
  return new Map((await listProviders(deps.db)).map((p) => [p.id, p.display_name]));
}

/** Everything the Settings tab lists. */
export async function ssoOverview(deps: Deps): Promise<{ providers: ProviderView[]; identities: IdentityListing[] }> {
  const [providers, identities] = await Promise.all([listProviders(deps.db), listIdentities(deps.db)]);
  return { providers: providers.map(toProviderView), identities };
}

/** A provider as an admin reads it over the API: its view, its author's username, and how many identities it links. */
export interface ProviderDetail {
  provider: ProviderView;
  author: string | null;
  linked: number;
}

/** Every provider in display order, or only the one with `id` (none when there is no such provider). */
export async function providerDetails(deps: Deps, id?: string): Promise<ProviderDetail[]> {
  const [rows, counts] = await Promise.all([listProvidersWithAuthors(deps.db, id), countIdentitiesByProvider(deps.db)]);
  return rows.map(({ author, ...row }) => ({ provider: toProviderView(row), author, linked: counts.get(row.id) ?? 0 }));
}

/** A page of bindings, newest first, and where the next page starts (undefined on the last page). */
export async function identitiesPage(
  deps: Deps,
  query: { providerId?: string; accountId?: string; after?: IdentityKey; limit: number },
): Promise<{ items: IdentityListing[]; next?: IdentityKey }> {
  const rows = await listIdentitiesPage(deps.db, { ...query, limit: query.limit + 1 });
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  return { items, next: rows.length > query.limit && last ? { linkedAt: last.linked_at, id: last.id } : undefined };
}

/** One account's bindings (its Profile section). */
export function identitiesOf(deps: Deps, accountId: string): Promise<IdentityListing[]> {
  return listIdentities(deps.db, accountId);
}

/** An admin act refused because its actor is not an administrator. */
type NotAdmin = { ok: false; reason: 'not-admin' };

/** Settings whose discovery failed, or whose chosen client authentication the provider's discovery does not list. */
type SettingsRefused =
  | { ok: false; reason: 'undiscoverable'; problem: DiscoveryProblem; issuer: string }
  | { ok: false; reason: 'client-auth-not-listed'; method: SecretMethod; listed: SecretMethod[] };

export type ProviderWriteResult =
  | { ok: true; id: string }
  | { ok: false; reason: 'duplicate-slug' }
  | NotAdmin
  | SettingsRefused;

/** How a save treats discovery: `checkDiscovery` saves an enabled provider only once its discovery succeeds. */
export interface SaveOptions {
  checkDiscovery?: boolean;
}

/**
 * Discovers the settings as a save would keep them; undefined when the discovery is usable and lists the chosen client
 * authentication method (automatic needs none listed: it falls back to the header).
 */
async function refusedSettings(
  deps: Deps,
  settings: { issuer: string; client_id: string; client_auth_method: ClientAuthSetting },
): Promise<SettingsRefused | undefined> {
  const found = await checkDiscovery(deps, settings);
  if (!found.ok) return { ok: false, reason: 'undiscoverable', problem: found.problem, issuer: settings.issuer };
  const method = settings.client_auth_method;
  if (method !== 'automatic' && !found.secretMethods.includes(method))
    return { ok: false, reason: 'client-auth-not-listed', method, listed: found.secretMethods };
  return undefined;
}

/** The refusal of an admin act whose actor is not an administrator, else undefined. */
async function notAdmin(deps: Deps, actor: AdminActor): Promise<NotAdmin | undefined> {
  return (await actorIsAdmin(deps, actor)) ? undefined : { ok: false, reason: 'not-admin' };
}

/**
 * Declares a provider authored by the actor (an administrator), enabled unless `input.enabled` is false. With
 * `checkDiscovery`, an enabled one is saved only when its discovery succeeds and lists the client authentication
 * method chosen (if not automatic); a disabled one is saved without (nobody signs in with it).
 */
export async function createProvider(
  deps: Deps,
  actor: AdminActor & { actorId: string },
  input: CreateProviderInput,
  options: SaveOptions = {},
): Promise<ProviderWriteResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  const enabled = input.enabled ?? true;
  const clientAuthMethod = input.client_auth_method ?? 'automatic';
  if (options.checkDiscovery && enabled) {
    const refusedSave = await refusedSettings(deps, { ...input, client_auth_method: clientAuthMethod });
    if (refusedSave) return refusedSave;
  }
  const now = deps.clock.now();
  const id = newId(deps.random);
  try {
    await insertProvider(deps.db, {
      id,
      display_name: input.display_name,
      slug: input.slug,
      issuer: input.issuer,
      client_id: input.client_id,
      client_secret: input.client_secret ?? null,
      enabled: enabled ? 1 : 0,
      created_at: now,
      updated_at: now,
      created_by: actor.actorId,
      sign_out_at_provider: input.sign_out_at_provider ? 1 : 0,
      client_auth_method: clientAuthMethod,
      client_auth_learned: null,
      client_auth_learned_at: null,
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'duplicate-slug' };
    throw err;
  }
  return { ok: true, id };
}

export type ChangeProviderResult =
  | { ok: true; issuerChanged: boolean; removedIdentities: number; endedSessions: number }
  | { ok: false; reason: 'duplicate-slug' | 'not-found' }
  | SettingsRefused
  | NotAdmin;

/** The settings discovery depends on: a change naming one of them is checked (with `checkDiscovery`). */
const DISCOVERY_FIELDS = ['issuer', 'client_id', 'enabled'] as const;

/** The client settings whose change makes an automatic provider forget the method it learned. */
const CLIENT_FIELDS = ['issuer', 'client_id', 'client_secret', 'client_auth_method'] as const;

/**
 * Changes the fields `change` names and keeps the others; `client_secret` replaces (string), clears (null) or is kept
 * (absent). With `checkDiscovery`, a change naming the issuer, client id or enabled flag of a provider that stays
 * enabled, or choosing a client authentication method, is saved only when discovery succeeds and lists the method
 * the provider will have (if not automatic). A new issuer, client id, secret or method forgets the method an
 * automatic provider learned. A `sub` is only unique at its issuer, so a new issuer drops every binding made through
 * the provider in the same transaction: otherwise the same `sub` at the new issuer would sign into the account that
 * linked it at the old one. A provider left disabled, or given a new issuer or client id, has every session it opened
 * ended in the same transaction: its logout tokens are refused (disabled) or no longer verify (`iss`, `aud`), so a
 * person the provider signs out would otherwise keep access. An administrator's act.
 */
export async function changeProvider(
  deps: Deps,
  actor: AdminActor,
  change: ProviderChange,
  options: SaveOptions = {},
): Promise<ChangeProviderResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  const choosesMethod = change.client_auth_method !== undefined && change.client_auth_method !== 'automatic';
  if (options.checkDiscovery && (choosesMethod || DISCOVERY_FIELDS.some((f) => change[f] !== undefined))) {
    const current = await findProviderById(deps.db, change.id);
    if (!current) return { ok: false, reason: 'not-found' };
    if (change.enabled ?? current.enabled === 1) {
      const refusedSave = await refusedSettings(deps, {
        issuer: change.issuer ?? current.issuer,
        client_id: change.client_id ?? current.client_id,
        client_auth_method: change.client_auth_method ?? current.client_auth_method,
      });
      if (refusedSave) return refusedSave;
    }
  }
  let result: ChangeProviderResult;
  let slug = change.slug;
  try {
    result = await deps.db.transaction().execute(async (trx): Promise<ChangeProviderResult> => {
      const current = await lockProvider(trx, deps.dialect, change.id);
      if (!current) return { ok: false, reason: 'not-found' };
      slug ??= current.slug;
      const issuerChanged = change.issuer !== undefined && current.issuer !== change.issuer;
      const removedIdentities = issuerChanged ? await deleteProviderIdentities(trx, change.id) : 0;
      const clientIdChanged = change.client_id !== undefined && current.client_id !== change.client_id;
      const disabled = (change.enabled ?? current.enabled === 1) === false;
      const endedSessions =
        issuerChanged || clientIdChanged || disabled ? await endProviderSessions(trx, change.id) : 0;
      const clientChanged = CLIENT_FIELDS.some((f) => change[f] !== undefined && change[f] !== current[f]);
      await updateProvider(trx, change.id, {
        ...(change.display_name !== undefined ? { display_name: change.display_name } : {}),
        ...(change.slug !== undefined ? { slug: change.slug } : {}),
        ...(change.issuer !== undefined ? { issuer: change.issuer } : {}),
        ...(change.client_id !== undefined ? { client_id: change.client_id } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled ? 1 : 0 } : {}),
        ...(change.client_secret !== undefined ? { client_secret: change.client_secret } : {}),
        ...(change.sign_out_at_provider !== undefined
          ? { sign_out_at_provider: change.sign_out_at_provider ? 1 : 0 }
          : {}),
        ...(change.client_auth_method !== undefined ? { client_auth_method: change.client_auth_method } : {}),
        ...(clientChanged ? { client_auth_learned: null, client_auth_learned_at: null } : {}),
        updated_at: deps.clock.now(),
      });
      return { ok: true, issuerChanged, removedIdentities, endedSessions };
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'duplicate-slug' };
    throw err;
  }
  if (result.ok && result.issuerChanged) {
    deps.log.info(
      {
        event: 'sso-issuer-changed',
        provider: change.id,
        slug,
        removedIdentities: result.removedIdentities,
        endedSessions: result.endedSessions,
      },
      'sso: provider issuer changed, its linked identities removed and the sessions it opened ended',
    );
  } else if (result.ok && result.endedSessions > 0) {
    deps.log.info(
      { event: 'sso-provider-sessions-ended', provider: change.id, slug, endedSessions: result.endedSessions },
      'sso: provider disabled or its client id changed, the sessions it opened ended',
    );
  }
  return result;
}

export type SecretResult =
  | { ok: true; outcome: 'set' | 'cleared' | 'kept' }
  | { ok: false; reason: 'not-found' }
  | NotAdmin;

/**
 * Sets, clears (wins over a typed value) or keeps (blank) a provider's client secret, forgetting the client
 * authentication method learned with the old one; an administrator's act.
 */
export async function changeProviderSecret(
  deps: Deps,
  actor: AdminActor,
  input: ProviderSecretInput,
): Promise<SecretResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  if (!(await findProviderById(deps.db, input.id))) return { ok: false, reason: 'not-found' };
  if (!input.clear_secret && input.client_secret === undefined) return { ok: true, outcome: 'kept' };
  const secret = input.clear_secret ? null : input.client_secret!;
  await updateProvider(deps.db, input.id, {
    client_secret: secret,
    client_auth_learned: null,
    client_auth_learned_at: null,
    updated_at: deps.clock.now(),
  });
  return { ok: true, outcome: secret === null ? 'cleared' : 'set' };
}

/** Done (or nothing was there to remove), or refused. */
export type RemoveResult = { ok: true } | NotAdmin;

/**
 * Deletes a provider, its bindings and the sessions it opened (the database's cascades), an administrator's act;
 * deleting one already gone is a no-op.
 */
export async function removeProvider(deps: Deps, actor: AdminActor, id: string): Promise<RemoveResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  await deleteProvider(deps.db, id);
  return { ok: true };
}

/**
 * Revokes any binding and ends the sessions it opened, an administrator's act; idempotent; the local account and its
 * other sessions stay.
 */
export async function removeIdentity(deps: Deps, actor: AdminActor, id: string): Promise<RemoveResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  await deps.db.transaction().execute(async (trx) => {
    const removed = await deleteIdentity(trx, id);
    if (removed)
      await endSessionsOpenedThrough(trx, {
        providerId: removed.provider_id,
        sub: removed.sub,
        accountId: removed.account_id,
      });
  });
  return { ok: true };
}

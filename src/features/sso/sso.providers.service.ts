// Administration of providers and bindings. Uniqueness of slugs is the database's job; a refusal comes back typed.
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { configurationFor } from './sso.discovery.ts';
import type { CreateProviderInput, ProviderSecretInput, UpdateProviderInput } from './sso.schema.ts';
import {
  deleteIdentity,
  deleteProvider,
  deleteProviderIdentities,
  findProviderById,
  insertProvider,
  listEnabledProviders,
  listIdentities,
  listProviders,
  lockProvider,
  updateProvider,
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
  };
}

/** The enabled providers: sign-in buttons and profile Link buttons. */
export async function enabledProviders(deps: Deps): Promise<ProviderView[]> {
  return (await listEnabledProviders(deps.db)).map(toProviderView);
}

/** Everything the Settings tab lists. */
export async function ssoOverview(deps: Deps): Promise<{ providers: ProviderView[]; identities: IdentityListing[] }> {
  const [providers, identities] = await Promise.all([listProviders(deps.db), listIdentities(deps.db)]);
  return { providers: providers.map(toProviderView), identities };
}

/** One account's bindings (its Profile section). */
export function identitiesOf(deps: Deps, accountId: string): Promise<IdentityListing[]> {
  return listIdentities(deps.db, accountId);
}

export type ProviderWriteResult = { ok: true; id: string } | { ok: false; reason: 'duplicate-slug' | 'not-found' };

/** Declares a provider, enabled, authored by `actorId`. */
export async function createProvider(deps: Deps, actorId: string, input: CreateProviderInput): Promise<ProviderWriteResult> {
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
      enabled: 1,
      created_at: now,
      updated_at: now,
      created_by: actorId,
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'duplicate-slug' };
    throw err;
  }
  return { ok: true, id };
}

export type ChangeProviderResult =
  | { ok: true; issuerChanged: boolean; removedIdentities: number }
  | { ok: false; reason: 'duplicate-slug' | 'not-found' };

/**
 * Changes a provider's name, slug, issuer, client id and enabled flag (the secret has its own form). A `sub` is only
 * unique at its issuer, so a new issuer drops every binding made through the provider in the same transaction:
 * otherwise the same `sub` at the new issuer would sign into the account that linked it at the old one.
 */
export async function changeProvider(deps: Deps, input: UpdateProviderInput): Promise<ChangeProviderResult> {
  let result: ChangeProviderResult;
  try {
    result = await deps.db.transaction().execute(async (trx): Promise<ChangeProviderResult> => {
      const current = await lockProvider(trx, deps.dialect, input.id);
      if (!current) return { ok: false, reason: 'not-found' };
      const issuerChanged = current.issuer !== input.issuer;
      const removedIdentities = issuerChanged ? await deleteProviderIdentities(trx, input.id) : 0;
      await updateProvider(trx, input.id, {
        display_name: input.display_name,
        slug: input.slug,
        issuer: input.issuer,
        client_id: input.client_id,
        enabled: input.enabled ? 1 : 0,
        updated_at: deps.clock.now(),
      });
      return { ok: true, issuerChanged, removedIdentities };
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'duplicate-slug' };
    throw err;
  }
  if (result.ok && result.issuerChanged) {
    deps.log.info(
      { event: 'sso-issuer-changed', provider: input.id, slug: input.slug, removedIdentities: result.removedIdentities },
      'sso: provider issuer changed, its linked identities removed',
    );
  }
  return result;
}

export type SecretResult = { ok: true; outcome: 'set' | 'cleared' | 'kept' } | { ok: false; reason: 'not-found' };

/** Sets, clears (wins over a typed value) or keeps (blank) a provider's client secret. */
export async function changeProviderSecret(deps: Deps, input: ProviderSecretInput): Promise<SecretResult> {
  if (!(await findProviderById(deps.db, input.id))) return { ok: false, reason: 'not-found' };
  if (!input.clear_secret && input.client_secret === undefined) return { ok: true, outcome: 'kept' };
  const secret = input.clear_secret ? null : input.client_secret!;
  await updateProvider(deps.db, input.id, { client_secret: secret, updated_at: deps.clock.now() });
  return { ok: true, outcome: secret === null ? 'cleared' : 'set' };
}

/** Deletes a provider and its bindings; deleting one already gone is a no-op. */
export async function removeProvider(deps: Deps, id: string): Promise<void> {
  await deleteProvider(deps.db, id);
}

/** Revokes any binding (admin); idempotent; the local account stays. */
export async function removeIdentity(deps: Deps, id: string): Promise<void> {
  await deleteIdentity(deps.db, id);
}

/** Why a provider's discovery failed, as the admin is told it. */
export type DiscoveryProblem = 'unreachable' | 'untrusted-certificate' | 'not-https' | 'bad-document' | 'issuer-mismatch';

/** TLS failures that mean "svc does not trust the provider's certificate" rather than "nothing answered". */
const CERTIFICATE_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS|HOSTNAME_MISMATCH|ALTNAME/;

/** Sorts a discovery failure (openid-client's errors, or fetch's) into the admin's words. */
function discoveryProblem(err: unknown): DiscoveryProblem {
  const e = err as { code?: string; cause?: { code?: string } };
  if (e.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return 'issuer-mismatch';
  if (typeof e.code === 'string' && e.code.startsWith('OAUTH_')) return 'bad-document';
  if (CERTIFICATE_CODES.test(e.cause?.code ?? '')) return 'untrusted-certificate';
  return 'unreachable';
}

/**
 * Runs discovery for provider settings before they are saved (a fresh fetch through the same code the sign-in uses)
 * and checks the document names https authorization, token and key endpoints. Undefined when all is well. Nothing is
 * logged: the answer is for the admin at the form.
 */
export async function checkDiscovery(deps: Deps, candidate: { issuer: string; client_id: string }): Promise<DiscoveryProblem | undefined> {
  const now = deps.clock.now();
  const probe: ProviderRow = {
    // Its own cache key, so the check never replaces a live provider's cached configuration.
    id: `check-${newId(deps.random)}`,
    display_name: '',
    slug: '',
    issuer: candidate.issuer,
    client_id: candidate.client_id,
    client_secret: null,
    enabled: 1,
    created_at: now,
    updated_at: now,
    created_by: '',
  };
  let metadata: Record<string, unknown>;
  try {
    metadata = (await configurationFor(deps, probe, { fresh: true })).config.serverMetadata() as Record<string, unknown>;
  } catch (err) {
    return discoveryProblem(err);
  }
  const endpoints = [metadata.authorization_endpoint, metadata.token_endpoint, metadata.jwks_uri];
  if (!endpoints.every((u) => typeof u === 'string' && URL.canParse(u))) return 'bad-document';
  if (!endpoints.every((u) => new URL(u as string).protocol === 'https:')) return 'not-https';
  return undefined;
}

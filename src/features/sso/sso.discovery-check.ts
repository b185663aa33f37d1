// The check an administrator's provider settings pass before they are saved: a fresh discovery through the code the
// sign-in uses, its endpoints https, and which ways of sending a secret it lists; a failure sorted into the admin's words.
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { configurationFor, listedSecretMethods } from './sso.discovery.ts';
import type { SecretMethod } from './sso.schema.ts';
import type { ProviderRow } from './sso.repo.ts';

/** Why a provider's discovery failed, as the admin is told it. */
export type DiscoveryProblem =
  | 'unreachable'
  | 'untrusted-certificate'
  | 'not-https'
  | 'bad-document'
  | 'issuer-mismatch';

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
 * and checks the document names https authorization, token and key endpoints. When all is well, says which ways of
 * sending a secret the provider lists. Nothing is logged: the answer is for the admin at the form.
 */
export async function checkDiscovery(
  deps: Deps,
  candidate: { issuer: string; client_id: string },
): Promise<{ ok: true; secretMethods: SecretMethod[] } | { ok: false; problem: DiscoveryProblem }> {
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
    sign_out_at_provider: 0,
    client_auth_method: 'automatic',
    client_auth_learned: null,
    client_auth_learned_at: null,
  };
  let metadata: Record<string, unknown>;
  try {
    metadata = (await configurationFor(deps, probe, { fresh: true })).config.serverMetadata() as Record<
      string,
      unknown
    >;
  } catch (err) {
    return { ok: false, problem: discoveryProblem(err) };
  }
  const endpoints = [metadata.authorization_endpoint, metadata.token_endpoint, metadata.jwks_uri];
  if (!endpoints.every((u) => typeof u === 'string' && URL.canParse(u))) return { ok: false, problem: 'bad-document' };
  if (!endpoints.every((u) => new URL(u as string).protocol === 'https:')) return { ok: false, problem: 'not-https' };
  return { ok: true, secretMethods: listedSecretMethods(metadata) };
}

// The relying party, through openid-client: discovery, authorization URL (PKCE S256, state, nonce) and the code
// exchange with every id_token check on, including its signature. Failures come back as typed reasons.
import fs from 'node:fs';
import tls from 'node:tls';
import * as oidc from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { ProviderRow } from './sso.repo.ts';
import { hasWellKnownPath } from './sso.schema.ts';

/** Seconds allowed for each request to the provider. */
const REQUEST_TIMEOUT_S = 10;
/** Claims that may label a binding for admins, in order of preference; never used to find an account. */
const LABEL_CLAIMS = ['email', 'preferred_username', 'name'] as const;
/** The longest label kept, in code points. */
export const LABEL_MAX = 200;
/** Control, format (bidi overrides, zero-width) and line/paragraph separator characters: never part of a label. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Why a step with the provider failed; each maps to one safe message. */
export type OidcFailure =
  | 'unreachable'
  | 'discovery-invalid'
  | 'cancelled'
  | 'provider-error'
  | 'token-refused'
  | 'token-invalid'
  | 'keys-changed';

/** What the code exchange proved: the verified subject and a display label. */
export interface VerifiedIdentity {
  sub: string;
  label: string;
}

/** The per-login secrets the callback must match. */
export interface FlowSecrets {
  state: string;
  nonce: string;
  verifier: string;
}

const agents = new Map<string, Agent>();

/** Fetch for provider traffic: trusts SVC_OIDC_CA_FILE's certificates besides the public roots when set. */
function fetcherFor(config: Config): oidc.CustomFetch | undefined {
  const file = config.oidcCaFile;
  if (!file) return undefined;
  let agent = agents.get(file);
  if (!agent) {
    agent = new Agent({ connect: { ca: [...tls.rootCertificates, fs.readFileSync(file, 'utf8')] } });
    agents.set(file, agent);
  }
  const dispatcher = agent;
  // undici's own fetch, so the Agent is the same undici major as the dispatcher option expects.
  return (url, options) => undiciFetch(url, { ...(options as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
}

/** Client authentication: none for a public client; the secret by the provider's preferred method otherwise (exported for tests). */
export function clientAuth(secret: string | null): oidc.ClientAuth {
  if (secret === null) return oidc.None();
  const basic = oidc.ClientSecretBasic(secret);
  const post = oidc.ClientSecretPost(secret);
  return (as, client, body, headers) => {
    // RFC 8414: an absent list means client_secret_basic (so does a malformed one).
    const listed = as.token_endpoint_auth_methods_supported;
    const methods: unknown[] = Array.isArray(listed) ? listed : ['client_secret_basic'];
    const chosen = methods.includes('client_secret_basic') || !methods.includes('client_secret_post') ? basic : post;
    chosen(as, client, body, headers);
  };
}

/**
 * Discovers the provider afresh on every use (start and callback), so the callback always verifies against the keys
 * the provider publishes now: a key rotation never fails the next sign-in, and no instance keeps state another needs.
 */
async function configurationFor(deps: Deps, p: ProviderRow): Promise<oidc.Configuration> {
  // openid-client fetches such a URL as the document itself and then skips its issuer-equality check.
  if (hasWellKnownPath(p.issuer)) throw new oidc.ClientError('the issuer URL points into /.well-known/');
  const customFetch = fetcherFor(deps.config);
  return oidc.discovery(new URL(p.issuer), p.client_id, undefined, clientAuth(p.client_secret), {
    ...(customFetch ? { [oidc.customFetch]: customFetch } : {}),
    timeout: REQUEST_TIMEOUT_S,
    // openid-client checks issuer, audience, azp, expiry and nonce by default, but the signature only when asked.
    execute: [oidc.enableNonRepudiationChecks],
  });
}

/** Sorts an error from openid-client into a failure reason; the details go to the log, without tokens or secrets. */
function classify(deps: Deps, p: ProviderRow, step: 'discovery' | 'authorize' | 'callback', err: unknown): OidcFailure {
  const e = err as { name?: string; code?: string; message?: string; error?: string; error_description?: string; cause?: unknown };
  let reason: OidcFailure;
  // Building the authorization URL makes no request: whatever fails there is the discovered metadata.
  if (step === 'authorize') reason = 'discovery-invalid';
  else if (err instanceof oidc.AuthorizationResponseError) reason = e.error === 'access_denied' ? 'cancelled' : 'provider-error';
  else if (err instanceof oidc.ResponseBodyError) reason = 'token-refused';
  else if (e.code === 'OAUTH_KEY_SELECTION_FAILED') reason = 'keys-changed';
  else if (err instanceof oidc.ClientError) reason = step === 'discovery' ? 'discovery-invalid' : 'token-invalid';
  else reason = 'unreachable';
  // Only the library's own messages: error causes and bodies may carry token material.
  const cause = e.cause instanceof Error ? (e.cause as Error & { code?: string }) : undefined;
  deps.log.warn(
    {
      provider: p.slug,
      step,
      reason,
      error: { name: e.name, code: e.code, message: e.message, oauthError: e.error, oauthErrorDescription: e.error_description },
      detail: cause ? { code: cause.code, message: cause.message } : undefined,
    },
    'sso: provider step failed',
  );
  return reason;
}

/**
 * Discovers the provider and builds its authorization URL for a fresh login. `promptLogin` asks the provider to
 * authenticate the user afresh (OIDC `prompt=login`) rather than reuse whatever session the browser holds there.
 */
export async function authorizationUrl(
  deps: Deps,
  p: ProviderRow,
  redirectUri: string,
  secrets: FlowSecrets,
  opts: { promptLogin?: boolean } = {},
): Promise<{ ok: true; url: string } | { ok: false; reason: OidcFailure }> {
  let config: oidc.Configuration;
  try {
    config = await configurationFor(deps, p);
  } catch (err) {
    return { ok: false, reason: classify(deps, p, 'discovery', err) };
  }
  try {
    // The metadata is the provider's JSON: a malformed list or endpoint is its error, never a 500 here.
    const supported = config.serverMetadata().scopes_supported;
    const offered = Array.isArray(supported) ? supported : [];
    const scope = ['openid', ...(['email', 'profile'] as const).filter((s) => offered.includes(s))].join(' ');
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      state: secrets.state,
      nonce: secrets.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(secrets.verifier),
      code_challenge_method: 'S256',
      ...(opts.promptLogin ? { prompt: 'login' } : {}),
    });
    return { ok: true, url: url.href };
  } catch (err) {
    return { ok: false, reason: classify(deps, p, 'authorize', err) };
  }
}

/**
 * Completes the authorization-code flow: checks state and RFC 9207 `iss`, exchanges the code with the PKCE
 * verifier, and verifies the id_token (signature against the published keys, issuer, audience/azp, expiry, nonce).
 * `callbackUrl` must carry the registered redirect_uri (external origin + path) and the provider's query.
 */
export async function exchangeCode(
  deps: Deps,
  p: ProviderRow,
  callbackUrl: URL,
  secrets: FlowSecrets,
): Promise<{ ok: true; identity: VerifiedIdentity } | { ok: false; reason: OidcFailure }> {
  let config: oidc.Configuration;
  try {
    config = await configurationFor(deps, p);
  } catch (err) {
    return { ok: false, reason: classify(deps, p, 'discovery', err) };
  }
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      expectedState: secrets.state,
      expectedNonce: secrets.nonce,
      pkceCodeVerifier: secrets.verifier,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims || typeof claims.sub !== 'string' || claims.sub === '') throw new oidc.ClientError('id_token without a subject');
    const label = [...LABEL_CLAIMS.map((k) => claims[k]), claims.sub].map(labelFrom).find((v) => v !== '') ?? '(unnamed)';
    return { ok: true, identity: { sub: claims.sub, label } };
  } catch (err) {
    return { ok: false, reason: classify(deps, p, 'callback', err) };
  }
}

/**
 * A claim as an admin-facing label: a string without control, bidi or other invisible characters (a provider's user
 * may pick their own name), trimmed and capped at LABEL_MAX code points; '' when nothing printable is left.
 */
export function labelFrom(value: unknown): string {
  if (typeof value !== 'string') return '';
  return Array.from(value.replace(UNPRINTABLE, '').trim()).slice(0, LABEL_MAX).join('').trim();
}

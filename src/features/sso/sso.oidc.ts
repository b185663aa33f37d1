// The relying party, through openid-client: authorization URL (PKCE S256, state, nonce) and the code exchange with
// every id_token check on, including its signature, over the cached discovery (sso.discovery.ts), authenticating a
// confidential client as its provider's setting says (automatic: the header, then the body once). Failures come back
// as typed reasons.
import * as oidc from 'openid-client';
import type { Deps } from '../../deps.ts';
import {
  configurationAfterFailure,
  configurationFor,
  FORCED_REFRESH_INTERVAL_MS,
  forgetConfiguration,
  listedSecretMethods,
  runExchange,
  type ExchangeSlot,
} from './sso.discovery.ts';
import { rememberClientAuth, type ProviderRow } from './sso.repo.ts';
import type { SecretMethod } from './sso.schema.ts';
import { INVISIBLE } from '../text-rules.ts';

/** Claims that may label a binding for admins, in order of preference; never used to find an account. */
const LABEL_CLAIMS = ['email', 'preferred_username', 'name'] as const;
/** The longest label kept, in code points. */
export const LABEL_MAX = 200;
/** Control, format (bidi overrides, zero-width) and line/paragraph separator characters: never part of a label. */
const UNPRINTABLE = new RegExp(INVISIBLE.source, 'gu');

/** Why a step with the provider failed; each maps to one safe message. */
export type OidcFailure =
  | 'unreachable'
  | 'discovery-invalid'
  | 'cancelled'
  | 'provider-error'
  | 'token-refused'
  | 'client-refused'
  | 'token-invalid'
  | 'keys-changed';

/**
 * oauth4webapi's message for an id_token whose signature does not verify (its code, OAUTH_INVALID_RESPONSE, is shared).
 */
const SIGNATURE_FAILED = 'JWT signature verification failed';

/**
 * The token endpoint's errors for credentials it refused (RFC 6749 5.2): invalid_client, and unauthorized_client, which
 * some providers (Glewlwyd) answer for a Basic header they cannot read. The code was not spent on such an answer.
 */
const CLIENT_REFUSALS = new Set(['invalid_client', 'unauthorized_client']);

/**
 * The OAuth error of a token-endpoint refusal: from the JSON body, or from the WWW-Authenticate challenge a provider
 * sends instead with a 401 to a Basic header (oidc-provider does); a 401 challenge without one means invalid_client.
 */
function oauthErrorOf(err: unknown): string | undefined {
  if (err instanceof oidc.ResponseBodyError) return err.error;
  if (!(err instanceof oidc.WWWAuthenticateChallengeError)) return undefined;
  const named = err.cause.map((ch) => ch.parameters.error).find((e) => typeof e === 'string');
  return named ?? (err.status === 401 ? 'invalid_client' : undefined);
}

/** A failed callback, and whether newer keys could cure it: the id_token's signature or key id failed, nothing else. */
type CallbackFailure = { ok: false; reason: OidcFailure; keyFailure: boolean };

/**
 * What the code exchange proved: the verified subject and a display label; the provider's session id (`sid`) when the
 * id_token carried one, and the id_token itself (a session keeps it as the hint for signing out at the provider; never
 * logged or shown).
 */
export interface VerifiedIdentity {
  sub: string;
  label: string;
  sid: string | undefined;
  idToken: string;
}

/** The per-login secrets the callback must match. */
export interface FlowSecrets {
  state: string;
  nonce: string;
  verifier: string;
}

/**
 * Sorts an error from openid-client into a failure reason; the details go to the log, without tokens or secrets (for
 * a callback, the client authentication method tried, never the secret).
 */
function classify(
  deps: Deps,
  p: ProviderRow,
  step: 'discovery' | 'authorize' | 'callback',
  err: unknown,
  clientAuth?: SecretMethod | 'none',
): OidcFailure {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    error?: string;
    error_description?: string;
    cause?: unknown;
  };
  let reason: OidcFailure;
  const oauthError = oauthErrorOf(err);
  // Building the authorization URL makes no request: whatever fails there is the discovered metadata.
  if (step === 'authorize') reason = 'discovery-invalid';
  else if (err instanceof oidc.AuthorizationResponseError)
    reason = e.error === 'access_denied' ? 'cancelled' : 'provider-error';
  else if (oauthError !== undefined && CLIENT_REFUSALS.has(oauthError)) reason = 'client-refused';
  else if (err instanceof oidc.ResponseBodyError || err instanceof oidc.WWWAuthenticateChallengeError)
    reason = 'token-refused';
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
      ...(clientAuth ? { clientAuth } : {}),
      error: {
        name: e.name,
        code: e.code,
        message: e.message,
        status: (e as { status?: unknown }).status,
        oauthError: oauthError ?? e.error,
        oauthErrorDescription: e.error_description,
      },
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
    ({ config } = await configurationFor(deps, p));
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
    // A configuration that cannot build a URL is not kept: the next start asks the provider again.
    await forgetConfiguration(deps, p, config);
    return { ok: false, reason: classify(deps, p, 'authorize', err) };
  }
}

/**
 * The methods to send a confidential client's secret with, in order: the one an administrator chose; or, automatic,
 * the one learned for the provider (while its discovery still lists it), else the header, then the other listed one
 * once. The header goes first whenever the provider lists it, or lists neither. Undefined for a public client.
 */
export function secretMethodsToTry(
  p: ProviderRow,
  metadata: { token_endpoint_auth_methods_supported?: unknown },
): SecretMethod[] | undefined {
  if (p.client_secret === null) return undefined;
  if (p.client_auth_method !== 'automatic') return [p.client_auth_method];
  const listed = listedSecretMethods(metadata);
  const learned = p.client_auth_learned;
  const first = learned !== null && listed.includes(learned) ? learned : (listed[0] ?? 'client_secret_basic');
  return [first, ...listed.filter((m) => m !== first)];
}

/**
 * Completes the authorization-code flow: checks state and RFC 9207 `iss`, exchanges the code with the PKCE
 * verifier, and verifies the id_token (signature against the published keys, issuer, audience/azp, expiry, nonce).
 * `callbackUrl` must carry the registered redirect_uri (external origin + path) and the provider's query.
 * A confidential client authenticates as secretMethodsToTry says: when the token endpoint refuses the client's
 * credentials (invalid_client, unauthorized_client) and another method is left, the exchange is sent once more with
 * it (a provider that refuses the client has not spent the code), and an automatic provider remembers the method it
 * then accepted.
 * When a token response arrived and its id_token failed on its signature or key id with a cached configuration, the
 * verification runs once more against a newer one (new metadata, keys fetched afresh), replaying that token response:
 * the code is single-use, and openid-client refetches keys on an unknown key id only when its copy is over 60 s old.
 * Any other failure (no code, a wrong `iss`, a refused code) fails before the token arrives and never forces a
 * discovery; forced ones are capped per provider (configurationAfterFailure), so replayed callbacks cannot drive them.
 */
export async function exchangeCode(
  deps: Deps,
  p: ProviderRow,
  callbackUrl: URL,
  secrets: FlowSecrets,
): Promise<{ ok: true; identity: VerifiedIdentity } | { ok: false; reason: OidcFailure }> {
  let found: { config: oidc.Configuration; cached: boolean };
  try {
    found = await configurationFor(deps, p);
  } catch (err) {
    return { ok: false, reason: classify(deps, p, 'discovery', err) };
  }
  const { tried, slot } = await exchangeWithClientAuth(deps, p, found.config, callbackUrl, secrets);
  if (tried.ok) return tried;
  if (!found.cached || !slot.recorded || !tried.keyFailure) return { ok: false, reason: tried.reason };
  let newer: oidc.Configuration | undefined;
  try {
    newer = await configurationAfterFailure(deps, p, found.config);
  } catch (err) {
    return { ok: false, reason: classify(deps, p, 'discovery', err) };
  }
  if (!newer) {
    deps.log.info(
      { provider: p.slug, reason: tried.reason, intervalMs: FORCED_REFRESH_INTERVAL_MS },
      'sso: verification failed; a fresh discovery was already forced within the interval, not retrying',
    );
    return { ok: false, reason: tried.reason };
  }
  deps.log.info(
    { provider: p.slug, reason: tried.reason },
    'sso: verification failed with a cached configuration, retrying with a fresh discovery',
  );
  const again = await verifyCallback(deps, p, newer, callbackUrl, secrets, {
    replay: slot.recorded,
    method: slot.method,
  });
  return again.ok ? again : { ok: false, reason: again.reason };
}

/**
 * The code exchange with each client authentication method of secretMethodsToTry in turn, moving on only when the
 * token endpoint refused the client's credentials. Returns the last outcome and the slot of the exchange it came from
 * (its recorded token response, for a replay).
 */
async function exchangeWithClientAuth(
  deps: Deps,
  p: ProviderRow,
  config: oidc.Configuration,
  callbackUrl: URL,
  secrets: FlowSecrets,
): Promise<{ tried: { ok: true; identity: VerifiedIdentity } | CallbackFailure; slot: ExchangeSlot }> {
  const [first, ...others] = secretMethodsToTry(p, config.serverMetadata()) ?? [undefined];
  let slot: ExchangeSlot = { method: first };
  let tried = await verifyCallback(deps, p, config, callbackUrl, secrets, slot);
  for (const method of others) {
    if (tried.ok || tried.reason !== 'client-refused') break;
    deps.log.info(
      { provider: p.slug, refused: slot.method, retryWith: method },
      'sso: the token endpoint refused the client credentials; sending this exchange once more another way',
    );
    slot = { method };
    tried = await verifyCallback(deps, p, config, callbackUrl, secrets, slot);
  }
  // The token endpoint took the credentials of a method other than the first: the provider's method from now on.
  const accepted = slot.recorded !== undefined && slot.recorded.status >= 200 && slot.recorded.status < 300;
  if (accepted && slot.method !== undefined && slot.method !== first && p.client_auth_method === 'automatic') {
    await rememberClientAuth(deps.db, p, slot.method, deps.clock.now());
    deps.log.info(
      { provider: p.slug, clientAuth: slot.method },
      'sso: the provider accepted the client credentials this way; svc uses it first from now on',
    );
  }
  return { tried, slot };
}

/**
 * One run of openid-client's code grant and id_token checks, with `slot` deciding whether the token POST is replayed
 * and how the client authenticates.
 */
async function verifyCallback(
  deps: Deps,
  p: ProviderRow,
  config: oidc.Configuration,
  callbackUrl: URL,
  secrets: FlowSecrets,
  slot: ExchangeSlot,
): Promise<{ ok: true; identity: VerifiedIdentity } | CallbackFailure> {
  try {
    const tokens = await runExchange(slot, () =>
      oidc.authorizationCodeGrant(config, callbackUrl, {
        expectedState: secrets.state,
        expectedNonce: secrets.nonce,
        pkceCodeVerifier: secrets.verifier,
        idTokenExpected: true,
      }),
    );
    const claims = tokens.claims();
    if (!claims || typeof claims.sub !== 'string' || claims.sub === '')
      throw new oidc.ClientError('id_token without a subject');
    const label =
      [...LABEL_CLAIMS.map((k) => claims[k]), claims.sub].map(labelFrom).find((v) => v !== '') ?? '(unnamed)';
    const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : undefined;
    return { ok: true, identity: { sub: claims.sub, label, sid, idToken: tokens.id_token ?? '' } };
  } catch (err) {
    const reason = classify(deps, p, 'callback', err, slot.method ?? 'none');
    return { ok: false, reason, keyFailure: isKeyFailure(err) };
  }
}

/** Whether openid-client refused the id_token for its signature or for a key id it could not find in its keys. */
function isKeyFailure(err: unknown): boolean {
  const e = err as { code?: string; cause?: unknown };
  if (e.code === 'OAUTH_KEY_SELECTION_FAILED') return true;
  return (
    err instanceof oidc.ClientError &&
    e.code === 'OAUTH_INVALID_RESPONSE' &&
    e.cause instanceof Error &&
    e.cause.message === SIGNATURE_FAILED
  );
}

/**
 * A claim as an admin-facing label: a string without control, bidi or other invisible characters (a provider's user
 * may pick their own name), trimmed and capped at LABEL_MAX code points; '' when nothing printable is left.
 */
export function labelFrom(value: unknown): string {
  if (typeof value !== 'string') return '';
  return Array.from(value.replace(UNPRINTABLE, '').trim()).slice(0, LABEL_MAX).join('').trim();
}

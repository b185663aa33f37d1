// The relying party, through openid-client: authorization URL (PKCE S256, state, nonce) and the code exchange with
// every id_token check on, including its signature, over the cached discovery (sso.discovery.ts). Failures come back
// as typed reasons.
import * as oidc from 'openid-client';
import type { Deps } from '../../deps.ts';
import {
  configurationAfterFailure,
  configurationFor,
  FORCED_REFRESH_INTERVAL_MS,
  forgetConfiguration,
  runExchange,
  type ExchangeSlot,
} from './sso.discovery.ts';
import type { ProviderRow } from './sso.repo.ts';
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
  | 'token-invalid'
  | 'keys-changed';

/**
 * oauth4webapi's message for an id_token whose signature does not verify (its code, OAUTH_INVALID_RESPONSE, is shared).
 */
const SIGNATURE_FAILED = 'JWT signature verification failed';

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

/** Sorts an error from openid-client into a failure reason; the details go to the log, without tokens or secrets. */
function classify(deps: Deps, p: ProviderRow, step: 'discovery' | 'authorize' | 'callback', err: unknown): OidcFailure {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    error?: string;
    error_description?: string;
    cause?: unknown;
  };
  let reason: OidcFailure;
  // Building the authorization URL makes no request: whatever fails there is the discovered metadata.
  if (step === 'authorize') reason = 'discovery-invalid';
  else if (err instanceof oidc.AuthorizationResponseError)
    reason = e.error === 'access_denied' ? 'cancelled' : 'provider-error';
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
      error: {
        name: e.name,
        code: e.code,
        message: e.message,
        oauthError: e.error,
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
 * Completes the authorization-code flow: checks state and RFC 9207 `iss`, exchanges the code with the PKCE
 * verifier, and verifies the id_token (signature against the published keys, issuer, audience/azp, expiry, nonce).
 * `callbackUrl` must carry the registered redirect_uri (external origin + path) and the provider's query.
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
  const first: ExchangeSlot = {};
  const tried = await verifyCallback(deps, p, found.config, callbackUrl, secrets, first);
  if (tried.ok) return tried;
  if (!found.cached || !first.recorded || !tried.keyFailure) return { ok: false, reason: tried.reason };
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
  const again = await verifyCallback(deps, p, newer, callbackUrl, secrets, { replay: first.recorded });
  return again.ok ? again : { ok: false, reason: again.reason };
}

/**
 * One run of openid-client's code grant and id_token checks, with `slot` deciding whether the token POST is replayed.
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
    return { ok: false, reason: classify(deps, p, 'callback', err), keyFailure: isKeyFailure(err) };
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

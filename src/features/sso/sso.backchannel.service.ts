// OpenID Connect Back-Channel Logout: a provider posts a signed logout token naming a person (`sub`) or one of its
// sessions (`sid`), and svc ends the sessions that provider opened for them. The token is verified with jose against
// the provider's published keys, found through the same cached discovery and transport sign-in uses; nothing but
// sessions changes (never an account, a binding, a password session or an API token).
import {
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import type * as oidc from 'openid-client';
import type { Deps } from '../../deps.ts';
import { sha256 } from '../../deps.ts';
import { endSessionsOpenedThrough } from '../auth/sessions.service.ts';
import { configurationFor, transportFor } from './sso.discovery.ts';
import { deleteExpiredLogoutJtis, findProviderBySlug, insertLogoutJti, type ProviderRow } from './sso.repo.ts';
import { SLUG_PATTERN } from './sso.schema.ts';

/** The event a logout token must carry in its `events` claim. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token is accepted for this long after it was issued (its `iat`), in seconds. */
export const LOGOUT_TOKEN_MAX_AGE_S = 5 * 60;
/** How far the provider's clock may be from svc's, in seconds (an `iat` this far ahead is accepted). */
export const CLOCK_TOLERANCE_S = 60;
/** Signature algorithms assumed when the provider's discovery lists none (OpenID Connect's default for id_tokens). */
const DEFAULT_ALGORITHMS = ['RS256'];
/** Asymmetric JWS algorithms: only these verify against published keys (never `none`, never a shared secret's HS*). */
const ASYMMETRIC = /^(?:RS|PS|ES)(?:256|384|512)$|^ES256K$|^EdDSA$|^Ed25519$/;
/** Milliseconds allowed for fetching the provider's keys. */
const KEYS_TIMEOUT_MS = 10_000;
/**
 * After the provider's discovery or keys could not be fetched, how long its logout tokens are answered "try again"
 * without contacting it: anyone may post a token, and each must not make svc call a failing provider again.
 */
export const UNAVAILABLE_FOR_MS = 30_000;
/** The `typ` header values a logout token may carry (lower case, without `application/`); none at all is accepted too. */
const TOKEN_TYPES = new Set(['jwt', 'logout+jwt']);

/** Why a back-channel logout was refused; each has one answer (sso.refusals.ts). */
export type BackchannelRefusal =
  | 'unknown-provider'
  | 'disabled'
  | 'no-token'
  | 'unreadable'
  | 'type'
  | 'algorithm'
  | 'signature'
  | 'issuer'
  | 'audience'
  | 'stale'
  | 'no-event'
  | 'nonce'
  | 'no-subject'
  | 'no-jti'
  | 'replayed'
  | 'keys-unavailable';

export type BackchannelResult = { ok: true; ended: number } | { ok: false; reason: BackchannelRefusal };

/** What a verified logout token names. */
interface LogoutClaims {
  sub: string | undefined;
  sid: string | undefined;
  jti: string;
  iat: number;
}

/** Each discovered configuration's remote key set (jose caches the keys and refetches once on an unknown key id). */
const keySets = new WeakMap<oidc.Configuration, JWTVerifyGetKey>();

/** Thrown by the key resolver when the provider's keys could not be fetched or read (not a verdict on the token). */
class KeysUnavailable extends Error {}

/** What a key set answers about the token itself: no published key fits it, or several do. */
const KEY_VERDICTS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS']);

/**
 * The provider's published keys, as a jose key resolver over the configuration's `jwks_uri` and svc's transport.
 * Anything it throws other than "no matching key" or "several matching keys" (a refused or failed fetch, a non-200
 * answer, a body that is not a key set, a timeout) is KeysUnavailable.
 */
function keysOf(deps: Deps, config: oidc.Configuration): JWTVerifyGetKey | undefined {
  const known = keySets.get(config);
  if (known) return known;
  const uri = config.serverMetadata().jwks_uri;
  if (typeof uri !== 'string' || !URL.canParse(uri) || new URL(uri).protocol !== 'https:') return undefined;
  const transport = transportFor(deps.config);
  const remote = createRemoteJWKSet(new URL(uri), {
    timeoutDuration: KEYS_TIMEOUT_MS,
    [customFetch]: (url, options) => transport(url, options as unknown as oidc.CustomFetchOptions),
  });
  const keys: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      if (KEY_VERDICTS.has((err as { code?: unknown }).code as string)) throw err;
      throw new KeysUnavailable("the provider's keys could not be fetched", { cause: err });
    }
  };
  keySets.set(config, keys);
  return keys;
}

/** Per provider id: when its discovery or keys last failed, and the save of the provider that failure was with. */
const unavailable = new WeakMap<Deps, Map<string, { at: number; updatedAt: number }>>();

function unavailableOf(deps: Deps): Map<string, { at: number; updatedAt: number }> {
  let map = unavailable.get(deps);
  if (!map) {
    map = new Map();
    unavailable.set(deps, map);
  }
  return map;
}

/** Whether the provider's discovery or keys failed within UNAVAILABLE_FOR_MS, with its settings as they are now. */
function recentlyUnavailable(deps: Deps, p: ProviderRow): boolean {
  const failed = unavailableOf(deps).get(p.id);
  return failed !== undefined && failed.updatedAt === p.updated_at && deps.clock.now() - failed.at < UNAVAILABLE_FOR_MS;
}

function markUnavailable(deps: Deps, p: ProviderRow): void {
  const map = unavailableOf(deps);
  const now = deps.clock.now();
  for (const [id, failed] of map) if (now - failed.at >= UNAVAILABLE_FOR_MS) map.delete(id);
  map.set(p.id, { at: now, updatedAt: p.updated_at });
}

/**
 * Checks what can be checked without the provider: a compact JWS (three parts) whose protected header parses, names
 * an asymmetric algorithm and, when it has a `typ`, says JWT or logout+jwt. A token failing here costs no request.
 */
function shapeRefusal(token: string): BackchannelRefusal | undefined {
  if (token.split('.').length !== 3) return 'unreadable';
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return 'unreadable';
  }
  if (typeof header.alg !== 'string' || !ASYMMETRIC.test(header.alg)) return 'algorithm';
  if (header.typ === undefined) return undefined;
  if (typeof header.typ !== 'string') return 'type';
  const type = header.typ.toLowerCase().replace(/^application\//, '');
  return TOKEN_TYPES.has(type) ? undefined : 'type';
}

/** The algorithms a provider signs with, as its discovery lists them for id_tokens, less any not asymmetric. */
function algorithmsOf(config: oidc.Configuration): string[] {
  const listed = config.serverMetadata().id_token_signing_alg_values_supported;
  const algorithms = Array.isArray(listed) ? listed : DEFAULT_ALGORITHMS;
  return algorithms.filter((a): a is string => typeof a === 'string' && ASYMMETRIC.test(a));
}

/** Sorts jose's verdict on a token into a refusal. */
function refusalOf(err: unknown): BackchannelRefusal {
  if (err instanceof KeysUnavailable) return 'keys-unavailable';
  const e = err as { code?: string; claim?: string };
  switch (e.code) {
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'algorithm';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'signature';
    case 'ERR_JWT_EXPIRED':
      return 'stale';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (e.claim === 'iss') return 'issuer';
      if (e.claim === 'aud') return 'audience';
      if (e.claim === 'iat' || e.claim === 'nbf' || e.claim === 'exp') return 'stale';
      if (e.claim === 'jti') return 'no-jti';
      if (e.claim === 'events') return 'no-event';
      return 'unreadable';
    default:
      return 'unreadable';
  }
}

/** A claim's value as a non-empty string, undefined when absent; null when present but not a non-empty string. */
function stringClaim(payload: JWTPayload, name: string): string | undefined | null {
  const value = payload[name];
  if (value === undefined) return undefined;
  return typeof value === 'string' && value !== '' ? value : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Verifies a logout token from `p`: first its shape (no request to the provider for a token that is not even a signed
 * JWT), then, unless the provider's discovery or keys failed within UNAVAILABLE_FOR_MS, its signature against the
 * provider's published keys with one of its asymmetric algorithms, `iss` (the discovered issuer), `aud` (the client
 * id), `iat` within LOGOUT_TOKEN_MAX_AGE_S (and `exp` when present) by svc's clock, the back-channel logout event, no
 * `nonce`, a `jti`, and a `sub` or a `sid`.
 */
async function verifyLogoutToken(
  deps: Deps,
  p: ProviderRow,
  token: string,
): Promise<{ ok: true; claims: LogoutClaims } | { ok: false; reason: BackchannelRefusal }> {
  const misshapen = shapeRefusal(token);
  if (misshapen) return { ok: false, reason: misshapen };
  if (recentlyUnavailable(deps, p)) return { ok: false, reason: 'keys-unavailable' };
  let config: oidc.Configuration;
  try {
    ({ config } = await configurationFor(deps, p));
  } catch {
    markUnavailable(deps, p);
    return { ok: false, reason: 'keys-unavailable' };
  }
  const keys = keysOf(deps, config);
  if (!keys) return { ok: false, reason: 'keys-unavailable' };
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms: algorithmsOf(config),
      issuer: config.serverMetadata().issuer,
      audience: p.client_id,
      currentDate: new Date(deps.clock.now()),
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE_S,
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iat', 'jti', 'events'],
    }));
  } catch (err) {
    const reason = refusalOf(err);
    if (reason === 'keys-unavailable') markUnavailable(deps, p);
    return { ok: false, reason };
  }
  const events = payload.events;
  if (!isObject(events) || !isObject(events[BACKCHANNEL_LOGOUT_EVENT])) return { ok: false, reason: 'no-event' };
  // An id_token carries a nonce; a logout token never does, so one cannot pass for the other.
  if (payload.nonce !== undefined) return { ok: false, reason: 'nonce' };
  const jti = stringClaim(payload, 'jti');
  if (typeof jti !== 'string') return { ok: false, reason: 'no-jti' };
  const sub = stringClaim(payload, 'sub');
  const sid = stringClaim(payload, 'sid');
  if (sub === null || sid === null) return { ok: false, reason: 'unreadable' };
  if (sub === undefined && sid === undefined) return { ok: false, reason: 'no-subject' };
  return { ok: true, claims: { sub, sid, jti, iat: payload.iat! } };
}

/**
 * Handles a back-channel logout from the provider at `slug`: refused for an unknown or disabled provider, a missing
 * token, one that fails a check, and one whose `jti` was already accepted from this provider. Accepted: the sessions
 * this provider opened in the provider session `sid` (with `sub` too: those of that `sub` opened in it, or in a
 * provider session their id_token did not name), or with `sub` alone every session it opened for that `sub`, end;
 * pending sign-ins owing a second factor included. Logged and counted either way, never with the token.
 */
export async function backchannelLogout(deps: Deps, slug: string, token: string): Promise<BackchannelResult> {
  const result = await receive(deps, slug, token);
  const provider = SLUG_PATTERN.test(slug) ? slug : undefined;
  if (result.ok) {
    deps.log.info({ provider, ended: result.ended }, 'sso: back-channel logout accepted');
    deps.metrics?.backchannelLogout('accepted', result.ended);
  } else {
    deps.log.warn({ provider, reason: result.reason }, 'sso: back-channel logout refused');
    deps.metrics?.backchannelLogout('refused', 0);
  }
  return result;
}

async function receive(deps: Deps, slug: string, token: string): Promise<BackchannelResult> {
  const provider = SLUG_PATTERN.test(slug) ? await findProviderBySlug(deps.db, slug) : undefined;
  if (!provider) return { ok: false, reason: 'unknown-provider' };
  if (provider.enabled !== 1) return { ok: false, reason: 'disabled' };
  if (token === '') return { ok: false, reason: 'no-token' };
  const verified = await verifyLogoutToken(deps, provider, token);
  if (!verified.ok) return verified;
  const { sub, sid, jti, iat } = verified.claims;
  // Kept until the token is too old to be accepted anyway (a second past the last accepted one): a replay before then
  // is refused.
  const keepUntil = (iat + LOGOUT_TOKEN_MAX_AGE_S + CLOCK_TOLERANCE_S + 1) * 1000;
  if (!(await insertLogoutJti(deps.db, provider.id, sha256(jti), keepUntil))) return { ok: false, reason: 'replayed' };
  const ended = await endSessionsOpenedThrough(deps.db, { providerId: provider.id, sub, sid });
  return { ok: true, ended };
}

/** Deletes recorded `jti`s of logout tokens too old to be accepted (housekeeping). */
export async function pruneLogoutJtis(deps: Deps): Promise<number> {
  return deleteExpiredLogoutJtis(deps.db, deps.clock.now());
}

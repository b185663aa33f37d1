// Each provider's discovery result (an openid-client Configuration, which also holds its JWKS cache), kept per process
// for DISCOVERY_TTL_MS so unauthenticated starts cannot make svc hit the provider at will. Keyed by the provider's id
// AND its issuer, client settings and last save, so an admin's edit (read from the database on each request, by any
// instance) is never served a stale configuration and any save drops the cached keys. Provider traffic goes through one
// fetch that can record the token response of a callback and replay it once, so an id_token signature or key-id failure
// can be retried against a fresh discovery without spending the single-use authorization code twice; such forced
// discoveries are capped per provider.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import tls from 'node:tls';
import * as oidc from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { ProviderRow } from './sso.repo.ts';
import { hasWellKnownPath, SECRET_METHODS, type SecretMethod } from './sso.schema.ts';

/** How long a discovered configuration is used before the provider is asked again. */
export const DISCOVERY_TTL_MS = 5 * 60_000;
/** Seconds allowed for each request to the provider. */
const REQUEST_TIMEOUT_S = 10;

/** A recorded token-endpoint answer: enough to hand openid-client the same response again. */
interface RecordedResponse {
  url: string;
  status: number;
  contentType: string;
  body: string;
}

/**
 * Per-callback state seen by the provider fetch and the client authentication: record the token response, or replay
 * one instead of re-sending; and how this exchange sends a confidential client's secret.
 */
export interface ExchangeSlot {
  recorded?: RecordedResponse;
  replay?: RecordedResponse;
  method?: SecretMethod;
}

const exchange = new AsyncLocalStorage<ExchangeSlot>();

interface Entry {
  issuer: string;
  clientId: string;
  secret: string | null;
  updatedAt: number;
  fetchedAt: number;
  config: Promise<oidc.Configuration>;
}

const caches = new WeakMap<Deps, Map<string, Entry>>();
const agents = new Map<string, Agent>();

/**
 * The transport (also for the keys back-channel logout tokens are checked with): undici with SVC_OIDC_CA_FILE's
 * certificates besides the public roots when set, else global fetch.
 */
export function transportFor(config: Config): oidc.CustomFetch {
  const file = config.oidcCaFile;
  if (!file) return (url, options) => fetch(url, options as RequestInit);
  let agent = agents.get(file);
  if (!agent) {
    agent = new Agent({ connect: { ca: [...tls.rootCertificates, fs.readFileSync(file, 'utf8')] } });
    agents.set(file, agent);
  }
  const dispatcher = agent;
  // undici's own fetch, so the Agent is the same undici major as the dispatcher option expects.
  return (url, options) =>
    undiciFetch(url, { ...(options as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
}

/** Provider fetch: inside runExchange, records the token POST's answer, or answers it from a recording (once). */
function fetcherFor(config: Config): oidc.CustomFetch {
  const transport = transportFor(config);
  return async (url, options) => {
    const slot = exchange.getStore();
    if (!slot || options.method !== 'POST') return transport(url, options);
    const replay = slot.replay;
    if (replay && replay.url === url) {
      slot.replay = undefined;
      return new Response(replay.body, { status: replay.status, headers: { 'content-type': replay.contentType } });
    }
    const res = await transport(url, options);
    const body = await res.clone().text();
    slot.recorded = { url, status: res.status, contentType: res.headers.get('content-type') ?? '', body };
    return res;
  };
}

/** Runs `fn` (one code exchange) with `slot` visible to the provider fetch. */
export function runExchange<T>(slot: ExchangeSlot, fn: () => Promise<T>): Promise<T> {
  return exchange.run(slot, fn);
}

/**
 * The secret-sending methods svc knows that the provider's discovery lists for its token endpoint, header first. An
 * absent (or malformed) list means client_secret_basic alone, as OpenID Connect Discovery says.
 */
export function listedSecretMethods(metadata: { token_endpoint_auth_methods_supported?: unknown }): SecretMethod[] {
  const listed = metadata.token_endpoint_auth_methods_supported;
  const methods: unknown[] = Array.isArray(listed) ? listed : ['client_secret_basic'];
  return SECRET_METHODS.filter((m) => methods.includes(m));
}

/**
 * Client authentication, through openid-client's own methods: none for a public client; for a confidential one the
 * method the exchange chose (ExchangeSlot.method), else the header when the provider lists it (or lists neither) and
 * the body when it lists only that (exported for tests).
 */
export function clientAuth(secret: string | null): oidc.ClientAuth {
  if (secret === null) return oidc.None();
  const methods: Record<SecretMethod, oidc.ClientAuth> = {
    client_secret_basic: oidc.ClientSecretBasic(secret),
    client_secret_post: oidc.ClientSecretPost(secret),
  };
  return (as, client, body, headers) => {
    const method = exchange.getStore()?.method ?? listedSecretMethods(as)[0] ?? 'client_secret_basic';
    methods[method](as, client, body, headers);
  };
}

async function discover(deps: Deps, p: ProviderRow): Promise<oidc.Configuration> {
  // openid-client fetches such a URL as the document itself and then skips its issuer-equality check.
  if (hasWellKnownPath(p.issuer)) throw new oidc.ClientError('the issuer URL points into /.well-known/');
  return oidc.discovery(new URL(p.issuer), p.client_id, undefined, clientAuth(p.client_secret), {
    [oidc.customFetch]: fetcherFor(deps.config),
    timeout: REQUEST_TIMEOUT_S,
    // openid-client checks issuer, audience, azp, expiry and nonce by default, but the signature only when asked.
    execute: [oidc.enableNonRepudiationChecks],
  });
}

function cacheOf(deps: Deps): Map<string, Entry> {
  let cache = caches.get(deps);
  if (!cache) {
    cache = new Map();
    caches.set(deps, cache);
  }
  return cache;
}

/**
 * The provider's configuration: the cached one while it is younger than DISCOVERY_TTL_MS and was discovered with
 * the same issuer and client settings and no admin save since, else a fresh discovery (shared by concurrent callers; a
 * failure is not kept). `cached` says whether it came from an earlier request, so a verification failure with it is
 * worth one retry.
 */
export async function configurationFor(
  deps: Deps,
  p: ProviderRow,
  opts: { fresh?: boolean } = {},
): Promise<{ config: oidc.Configuration; cached: boolean }> {
  const cache = cacheOf(deps);
  const now = deps.clock.now();
  const hit = cache.get(p.id);
  if (!opts.fresh && hit && now - hit.fetchedAt < DISCOVERY_TTL_MS && sameSettings(hit, p))
    return { config: await hit.config, cached: true };
  for (const [id, e] of cache) if (now - e.fetchedAt >= DISCOVERY_TTL_MS) cache.delete(id);
  const entry: Entry = {
    issuer: p.issuer,
    clientId: p.client_id,
    secret: p.client_secret,
    updatedAt: p.updated_at,
    fetchedAt: now,
    config: discover(deps, p),
  };
  cache.set(p.id, entry);
  try {
    return { config: await entry.config, cached: false };
  } catch (err) {
    if (cache.get(p.id) === entry) cache.delete(p.id);
    throw err;
  }
}

/** The least time between two discoveries that failed verifications force for one provider, per process. */
export const FORCED_REFRESH_INTERVAL_MS = 30_000;

/**
 * Per provider id: when the last forced discovery started, and its outcome (shared by the requests it was refused to).
 */
const forcedRefreshes = new WeakMap<
  Deps,
  Map<string, { at: number; config: Promise<oidc.Configuration | undefined> }>
>();

/**
 * A configuration newer than `failed` to verify a callback again with: the cache's current one when another request
 * already replaced `failed`, else a forced fresh discovery, at most one per provider every FORCED_REFRESH_INTERVAL_MS
 * (within that, the last forced one if it differs from `failed`). Undefined when there is none to try.
 */
export async function configurationAfterFailure(
  deps: Deps,
  p: ProviderRow,
  failed: oidc.Configuration,
): Promise<oidc.Configuration | undefined> {
  const now = deps.clock.now();
  const hit = cacheOf(deps).get(p.id);
  if (hit && now - hit.fetchedAt < DISCOVERY_TTL_MS && sameSettings(hit, p)) {
    const current = await hit.config.catch(() => undefined);
    if (current && current !== failed) return current;
  }
  let forced = forcedRefreshes.get(deps);
  if (!forced) {
    forced = new Map();
    forcedRefreshes.set(deps, forced);
  }
  const last = forced.get(p.id);
  if (last && now - last.at < FORCED_REFRESH_INTERVAL_MS) {
    const recent = await last.config;
    return recent !== failed ? recent : undefined;
  }
  const fresh = configurationFor(deps, p, { fresh: true }).then((r) => r.config);
  // Later requests within the interval share this outcome; a failed discovery leaves them nothing to retry with.
  forced.set(p.id, { at: now, config: fresh.catch(() => undefined) });
  return fresh;
}

/** Drops the provider's cached configuration if it is still `config` (a newer one stays). */
export async function forgetConfiguration(deps: Deps, p: ProviderRow, config: oidc.Configuration): Promise<void> {
  const cache = cacheOf(deps);
  const entry = cache.get(p.id);
  if (entry && (await entry.config.catch(() => undefined)) === config && cache.get(p.id) === entry) cache.delete(p.id);
}

/** Whether `e` was discovered for the provider as it is now: same settings and no admin save since. */
function sameSettings(e: Entry, p: ProviderRow): boolean {
  return (
    e.issuer === p.issuer && e.clientId === p.client_id && e.secret === p.client_secret && e.updatedAt === p.updated_at
  );
}

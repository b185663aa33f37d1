// Signing out at the provider (OpenID Connect RP-initiated logout): after svc ends a session a provider opened, the
// browser is sent to that provider's end-session endpoint, when the provider is enabled, an administrator turned "Sign
// out at the provider too" on, and its discovery names the endpoint. The end-session URL carries the session's id_token
// as its hint, so it waits in the database for the one browser holding its handle, never in a page.
import * as oidc from 'openid-client';
import type { Deps } from '../../deps.ts';
import { randomToken, sha256 } from '../../deps.ts';
import type { SessionOrigin } from '../auth/sessions.service.ts';
import { configurationFor } from './sso.discovery.ts';
import {
  deleteExpiredSignOuts,
  findProviderById,
  findProviderBySlug,
  insertSignOut,
  listProviders,
  takeSignOut,
  type ProviderRow,
} from './sso.repo.ts';

/** How long a sign-out at the provider waits for its browser to come for it. */
export const SIGN_OUT_TTL_MS = 5 * 60_000;

/**
 * How long signing out and the Settings tab wait for a provider's discovery when it is not cached. A provider that is
 * slower (up to the request timeout when it does not answer) is not waited for: the person is signed out locally and
 * the tab says it did not answer yet, while the request goes on and fills the cache for the next time.
 */
export const DISCOVERY_WAIT_MS = 3_000;

/** Thrown by configurationWithin when discovery did not answer within DISCOVERY_WAIT_MS. */
class DiscoverySlow extends Error {
  override name = 'DiscoverySlow';
}

/** The provider's discovered configuration, or a DiscoverySlow rejection after DISCOVERY_WAIT_MS. */
async function configurationWithin(deps: Deps, provider: ProviderRow): Promise<oidc.Configuration> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DiscoverySlow('discovery did not answer in time')), DISCOVERY_WAIT_MS);
  });
  try {
    return (await Promise.race([configurationFor(deps, provider), slow])).config;
  } finally {
    clearTimeout(timer);
  }
}

/** A sign-out at the provider made ready: the browser's handle to it, and the provider it goes to. */
export interface PreparedSignOut {
  handle: string;
  provider: ProviderRow;
}

/**
 * What a provider's discovery says of its end-session endpoint: named, absent, unknown (discovery failed), or slow (it
 * did not answer within DISCOVERY_WAIT_MS).
 */
export type EndSessionState =
  | { kind: 'named'; endpoint: string }
  | { kind: 'absent' }
  | { kind: 'unknown' }
  | { kind: 'slow' };

/**
 * For each enabled provider with "Sign out at the provider too" on, what its discovery (cached as for sign-in) says of
 * its end-session endpoint, by provider id: the Settings tab shows whether signing out reaches the provider.
 */
export async function endSessionStates(deps: Deps): Promise<Map<string, EndSessionState>> {
  const providers = (await listProviders(deps.db)).filter((p) => p.enabled === 1 && p.sign_out_at_provider === 1);
  const states = await Promise.all(
    providers.map(async (p): Promise<[string, EndSessionState]> => {
      try {
        const config = await configurationWithin(deps, p);
        const endpoint = config.serverMetadata().end_session_endpoint;
        return [
          p.id,
          typeof endpoint === 'string' && endpoint !== '' ? { kind: 'named', endpoint } : { kind: 'absent' },
        ];
      } catch (err) {
        return [p.id, { kind: err instanceof DiscoverySlow ? 'slow' : 'unknown' }];
      }
    }),
  );
  return new Map(states);
}

/**
 * Makes ready the sign-out at the provider that opened a session, from how it was opened (read before it ended). The
 * end-session URL (id_token_hint, client_id, post_logout_redirect_uri, a random state), built by openid-client, is kept
 * for SIGN_OUT_TTL_MS under the SHA-256 of a fresh random handle. Undefined when signing out stays local: a provider
 * gone, disabled, not asked to, or whose discovery names no endpoint or fails (logged).
 */
export async function prepareProviderSignOut(
  deps: Deps,
  origin: SessionOrigin,
  postLogoutRedirectUri: string,
): Promise<PreparedSignOut | undefined> {
  const provider = await findProviderById(deps.db, origin.providerId);
  if (provider?.enabled !== 1 || provider.sign_out_at_provider !== 1) return undefined;
  let config: oidc.Configuration;
  try {
    config = await configurationWithin(deps, provider);
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    deps.log.warn(
      { provider: provider.slug, error: { name: e.name, code: e.code, message: e.message } },
      err instanceof DiscoverySlow
        ? 'sso: signing out at the provider skipped: its discovery did not answer in time, so the sign-out stayed local'
        : 'sso: signing out at the provider skipped: its discovery failed, so the sign-out stayed local',
    );
    return undefined;
  }
  let url: URL;
  try {
    url = oidc.buildEndSessionUrl(config, {
      id_token_hint: origin.idToken,
      client_id: provider.client_id,
      post_logout_redirect_uri: postLogoutRedirectUri,
      state: randomToken(deps.random, 16),
    });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    deps.log.info(
      { provider: provider.slug, error: { code: e.code, message: e.message } },
      'sso: signing out at the provider skipped: its discovery names no usable end-session endpoint',
    );
    return undefined;
  }
  const handle = randomToken(deps.random, 32);
  await insertSignOut(deps.db, {
    handle_hash: sha256(handle),
    provider_id: provider.id,
    url: url.href,
    expires_at: deps.clock.now() + SIGN_OUT_TTL_MS,
  });
  return { handle, provider };
}

/**
 * Takes the sign-out waiting under `handle` for the provider at `slug`: its end-session URL, once, before it expires.
 * Undefined for no handle, an unknown, spent or expired one, or one made for another provider.
 */
export async function takeProviderSignOut(
  deps: Deps,
  slug: string,
  handle: string | undefined,
): Promise<string | undefined> {
  if (!handle) return undefined;
  const waiting = await takeSignOut(deps.db, sha256(handle));
  if (!waiting || waiting.expires_at <= deps.clock.now()) return undefined;
  const provider = await findProviderBySlug(deps.db, slug);
  return provider?.id === waiting.provider_id ? waiting.url : undefined;
}

/** Deletes sign-outs no browser came for in time (housekeeping). */
export async function pruneSignOuts(deps: Deps): Promise<number> {
  return deleteExpiredSignOuts(deps.db, deps.clock.now());
}

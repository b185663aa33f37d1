// The SSO round-trips: start (state, nonce, PKCE verifier), finish (verify and exchange), then sign in or link.
// Bindings are looked up on the verified (provider, sub) pair only; nothing is created or roled from claims.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { randomToken, safeEqual, newId, sha256 } from '../../deps.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { throttleBucket } from '../../net/client-address.ts';
import { findAccountById, type Account } from '../auth/accounts.repo.ts';
import { endSessionsOpenedThrough } from '../auth/sessions.service.ts';
import { actorRecentlyConfirmed } from '../tokens/actor-confirmed.ts';
import { reserveAttempt, type ThrottlePolicy } from '../auth/throttle.service.ts';
import { authorizationUrl, exchangeCode, type OidcFailure, type VerifiedIdentity } from './sso.oidc.ts';
import {
  deleteIdentity,
  findAccountIdentity,
  findIdentity,
  findIdentityAtIssuer,
  deleteExpiredSpentStates,
  findProviderBySlug,
  insertIdentity,
  insertSpentState,
  lockProvider,
  metaInsertIfAbsent,
  shareIdentity,
  shareProvider,
  type ProviderRow,
} from './sso.repo.ts';

/** How long a started sign-in or link may take at the provider. */
export const FLOW_TTL_MS = 10 * 60 * 1000;
/**
 * Sign-in starts per (client address, provider), IPv6 by /64: 60 a minute. Each start may cost a request to the
 * provider, and anyone may make one; every start counts (none is settled), so the window simply fills. Per provider,
 * so one user behind a shared address (an office's NAT, an unlisted proxy) holds the others off one provider at most.
 */
export const START_POLICY: ThrottlePolicy = { maxFailures: 60, windowMs: 60_000, lockMs: 60_000 };
/** Where the flow-cookie signing key lives: shared by every instance through the database. */
const COOKIE_KEY_META = 'sso_flow_cookie_key';

export type FlowKind = 'login' | 'link';

/** What the short-lived signed cookie carries between the start and the callback. */
export interface FlowState {
  state: string;
  nonce: string;
  verifier: string;
  providerId: string;
  kind: FlowKind;
  /** For a link: the account that started it, which must be the one finishing it. */
  accountId?: string;
  expiresAt: number;
}

/** Why a flow stopped; each maps to one safe message. */
export type FlowFailure = OidcFailure | 'not-found' | 'disabled' | 'expired' | 'state-mismatch' | 'already-used';

export type StartResult =
  | { ok: true; url: string; flow: FlowState }
  | { ok: false; reason: FlowFailure }
  | { ok: false; reason: 'too-many-starts'; retryAfterMs: number }
  | { ok: false; reason: 'reauth-required' };
export type FinishResult =
  | { ok: true; provider: ProviderRow; identity: VerifiedIdentity }
  | { ok: false; reason: FlowFailure; provider?: ProviderRow };

const keys = new WeakMap<Deps['db'], string>();

/** The flow cookie's HMAC key: generated once, kept in the database so every instance shares it. */
export async function flowCookieKey(deps: Deps): Promise<string> {
  let key = keys.get(deps.db);
  if (!key) {
    key = await metaInsertIfAbsent(deps.db, COOKIE_KEY_META, randomToken(deps.random, 32));
    keys.set(deps.db, key);
  }
  return key;
}

/**
 * Starts a login or link at an enabled provider: fresh state, nonce and verifier, and the URL to send the browser to.
 * A sign-in start at an enabled provider counts against (client address, provider) before anything is fetched
 * (START_POLICY); unknown and disabled slugs are answered from a read and write no counter. A link asks the provider to
 * authenticate the user afresh (`prompt=login`), so the identity bound is one the user just signed in as, not whatever
 * session the browser happened to hold at the provider. A linked identity signs in as the account for as long as it
 * stays linked, so a link starts only from the account's session `sessionIdHash` confirmed within the last 10 minutes
 * ("Confirm it's you"), else 'reauth-required' before anything else; the round trip that follows is bound to this
 * browser and account and lasts at most FLOW_TTL_MS.
 */
export async function startFlow(
  deps: Deps,
  slug: string,
  start: { kind: 'login'; address: string } | { kind: 'link'; accountId: string; sessionIdHash: string },
  redirectUri: string,
): Promise<StartResult> {
  if (
    start.kind === 'link' &&
    !(await actorRecentlyConfirmed(deps, { actorId: start.accountId, sessionIdHash: start.sessionIdHash }))
  ) {
    return { ok: false, reason: 'reauth-required' };
  }
  const provider = await findProviderBySlug(deps.db, slug);
  if (!provider) return { ok: false, reason: 'not-found' };
  if (provider.enabled !== 1) return { ok: false, reason: 'disabled' };
  if (start.kind === 'login') {
    const key = `sso-start:${provider.id}:${throttleBucket(start.address)}`;
    const counted = await reserveAttempt(deps, [{ key, policy: START_POLICY }]);
    if (!counted.ok) return { ok: false, reason: 'too-many-starts', retryAfterMs: counted.retryAfterMs };
  }
  const secrets = {
    state: randomToken(deps.random, 32),
    nonce: randomToken(deps.random, 32),
    verifier: randomToken(deps.random, 48),
  };
  const started = await authorizationUrl(deps, provider, redirectUri, secrets, { promptLogin: start.kind === 'link' });
  if (!started.ok) return started;
  const accountId = start.kind === 'link' ? start.accountId : undefined;
  return {
    ok: true,
    url: started.url,
    flow: {
      ...secrets,
      providerId: provider.id,
      kind: start.kind,
      accountId,
      expiresAt: deps.clock.now() + FLOW_TTL_MS,
    },
  };
}

/**
 * Finishes a flow from its callback URL (registered redirect_uri plus the provider's query) and the cookie's state.
 * The flow is spent in the database before its code is exchanged: its state's hash is recorded until the flow
 * expires, so a callback replayed with its cookie (copied before the browser dropped it) is refused as 'already-used'
 * on every instance, even by a provider that would exchange the same code twice.
 */
export async function finishFlow(
  deps: Deps,
  slug: string,
  kind: FlowKind,
  flow: FlowState | undefined,
  callbackUrl: URL,
  accountId?: string,
): Promise<FinishResult> {
  const provider = await findProviderBySlug(deps.db, slug);
  if (!provider) return { ok: false, reason: 'not-found' };
  if (provider.enabled !== 1) return { ok: false, reason: 'disabled', provider };
  if (!flow || flow.expiresAt <= deps.clock.now()) return { ok: false, reason: 'expired', provider };
  const returned = callbackUrl.searchParams.get('state') ?? '';
  if (
    flow.kind !== kind ||
    flow.providerId !== provider.id ||
    flow.accountId !== accountId ||
    !safeEqual(returned, flow.state)
  ) {
    deps.log.warn({ provider: provider.slug, kind }, 'sso: callback does not match the flow this browser started');
    return { ok: false, reason: 'state-mismatch', provider };
  }
  if (!(await insertSpentState(deps.db, sha256(flow.state), flow.expiresAt))) {
    deps.log.warn({ provider: provider.slug, kind }, 'sso: a callback of a flow already used was replayed');
    return { ok: false, reason: 'already-used', provider };
  }
  const done = await exchangeCode(deps, provider, callbackUrl, flow);
  if (!done.ok) return { ok: false, reason: done.reason, provider };
  return { ok: true, provider, identity: done.identity };
}

/** Deletes the spent states of flows that have expired (housekeeping): their cookies are refused as expired anyway. */
export async function pruneSpentStates(deps: Deps): Promise<number> {
  return deleteExpiredSpentStates(deps.db, deps.clock.now());
}

/**
 * The account bound to a (provider, sub) verified against `provider` as read before the exchange; a binding only
 * counts while the provider still has the issuer that verified the subject. A suspended account is refused.
 */
export async function accountForIdentity(
  deps: Deps,
  provider: ProviderRow,
  sub: string,
): Promise<{ ok: true; account: Account } | { ok: false; reason: 'unbound' | 'suspended' }> {
  const binding = await findIdentityAtIssuer(deps.db, provider.id, provider.issuer, sub);
  const account = binding ? await findAccountById(deps.db, binding.account_id) : undefined;
  if (!account) return { ok: false, reason: 'unbound' };
  return account.suspended_at === null ? { ok: true, account } : { ok: false, reason: 'suspended' };
}

/**
 * Opens the session of a sign-in through `provider` for the account accountForIdentity found, with `open` (which
 * creates it through the deps it is given), in one transaction that first reads again, under a share lock on
 * PostgreSQL (SQLite runs one transaction at a time), what that look-up relied on: the provider still enabled with the
 * issuer that verified the subject, and the binding still to that account. An unlink, an admin's removal, a disable or
 * an issuer change committed in between refuses the sign-in, instead of leaving a session their ending of sessions
 * missed; one committed after waits for this transaction and then ends the new session with the others.
 */
export async function openSessionThrough(
  deps: Deps,
  provider: ProviderRow,
  sub: string,
  accountId: string,
  open: (inTransaction: Deps) => Promise<string>,
): Promise<{ ok: true; cookie: string } | { ok: false; reason: 'unbound' | 'disabled' }> {
  return deps.db.transaction().execute(async (trx) => {
    const current = await shareProvider(trx, deps.dialect, provider.id);
    if (!current || current.issuer !== provider.issuer) return { ok: false, reason: 'unbound' };
    if (current.enabled !== 1) return { ok: false, reason: 'disabled' };
    const binding = await shareIdentity(trx, deps.dialect, provider.id, sub);
    if (binding?.account_id !== accountId) return { ok: false, reason: 'unbound' };
    return { ok: true, cookie: await open({ ...deps, db: trx }) };
  });
}

export type LinkResult =
  | { ok: true; already: boolean }
  | { ok: false; reason: 'bound-elsewhere' | 'account-has-other' | 'provider-changed' };

/**
 * Binds a verified identity to the caller's account; relinking one's own identity is a no-op. `provider` is the row
 * the identity was verified against: the insert happens under the provider's lock and only while it still exists
 * with that issuer, so it never lands after an issuer change (which drops the bindings) or a delete.
 */
export async function linkIdentity(
  deps: Deps,
  accountId: string,
  provider: ProviderRow,
  identity: Pick<VerifiedIdentity, 'sub' | 'label'>,
): Promise<LinkResult> {
  const check = async (q: Deps['db'] | Transaction<DB>): Promise<LinkResult | undefined> => {
    const bound = await findIdentity(q, provider.id, identity.sub);
    if (bound)
      return bound.account_id === accountId ? { ok: true, already: true } : { ok: false, reason: 'bound-elsewhere' };
    if (await findAccountIdentity(q, accountId, provider.id)) return { ok: false, reason: 'account-has-other' };
    return undefined;
  };
  try {
    return await deps.db.transaction().execute(async (trx): Promise<LinkResult> => {
      const current = await lockProvider(trx, deps.dialect, provider.id);
      if (!current || current.issuer !== provider.issuer) return { ok: false, reason: 'provider-changed' };
      const refused = await check(trx);
      if (refused) return refused;
      await insertIdentity(trx, {
        id: newId(deps.random),
        provider_id: provider.id,
        sub: identity.sub,
        account_id: accountId,
        label: identity.label,
        linked_at: deps.clock.now(),
      });
      return { ok: true, already: false };
    });
  } catch (err) {
    // A concurrent link won the race: the unique indexes decided, report what they decided.
    if (isUniqueViolation(err)) return (await check(deps.db)) ?? { ok: false, reason: 'bound-elsewhere' };
    throw err;
  }
}

/**
 * Removes one of the caller's own bindings and ends every session it opened, the one making the request included when
 * that one came through it (its holder then signs in again with the password). A stale or foreign id changes nothing.
 */
export async function unlinkOwnIdentity(
  deps: Deps,
  accountId: string,
  identityId: string,
  currentIdHash: string,
): Promise<{ removed: boolean; endedCurrent: boolean }> {
  return deps.db.transaction().execute(async (trx) => {
    const removed = await deleteIdentity(trx, identityId, accountId);
    if (!removed) return { removed: false, endedCurrent: false };
    const current = await trx
      .selectFrom('sessions')
      .select('id_hash')
      .where('id_hash', '=', currentIdHash)
      .where('sso_provider_id', '=', removed.provider_id)
      .where('sso_sub', '=', removed.sub)
      .executeTakeFirst();
    await endSessionsOpenedThrough(trx, { providerId: removed.provider_id, sub: removed.sub, accountId });
    return { removed: true, endedCurrent: current !== undefined };
  });
}

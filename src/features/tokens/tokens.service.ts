// Personal API tokens: minted from a session, shown once, stored as SHA-256, presented as a bearer token on /api/.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { newId, randomToken, sha256 } from '../../deps.ts';
import { throttleBucket } from '../../net/client-address.ts';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import { ADDRESS_POLICY, reserveAttempt, settleAttempt, type ThrottleKey } from '../auth/throttle.service.ts';
import {
  deleteTokenOf,
  deleteTokensOfAccount,
  findTokenWithAccount,
  insertToken,
  listTokensOf,
  touchToken,
} from './tokens.repo.ts';

/** Recognisable prefix, so secret scanners can spot a leaked token. */
export const TOKEN_PREFIX = 'svc_pat_';
/** Prefix plus 256 random bits in base64url. */
const TOKEN_SHAPE = /^svc_pat_[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often. */
export const LAST_USED_EVERY_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Lifetimes offered when minting, by form value; null is "no expiry". */
export const EXPIRY_CHOICES: Record<string, { label: string; days: number | null }> = {
  '30': { label: '30 days', days: 30 },
  '90': { label: '90 days', days: 90 },
  '365': { label: '1 year', days: 365 },
  never: { label: 'No expiry', days: null },
};
/** The lifetime preselected in the form. */
export const DEFAULT_EXPIRY = '90';

/** A token as its owner sees it in the list: never the token or its hash. */
export interface TokenSummary {
  id: string;
  name: string;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
  expired: boolean;
  /** GET and HEAD only. */
  readOnly: boolean;
}

/** The account a bearer token acts as, with the role read from the account row on this request. */
export interface ApiAccount {
  id: string;
  username: string;
  role: 'admin' | 'viewer';
  /** The token that authenticated this request. */
  tokenId: string;
  /** The token was minted read-only: every write through it is refused. */
  readOnly: boolean;
}

/**
 * Mints a token from a signed-in session, which must have confirmed itself ("Confirm it's you") within the last 10
 * minutes: a stolen session alone cannot mint a long-lived credential. The plaintext is returned once, never stored.
 */
export async function mintToken(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; name: string; expiry: string; readOnly?: boolean },
): Promise<MintResult> {
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
  if (await nameTaken(deps, input.accountId, input.name)) return { ok: false, reason: 'name-taken' };
  return { ok: true, ...(await createToken(deps, input.accountId, input)) };
}

/** A mint's outcome: the token (shown once), or why nothing was minted. */
export type MintResult =
  | { ok: true; id: string; token: string }
  | { ok: false; reason: 'reauth-required' | 'name-taken' };

/**
 * Whether the account already has an unexpired token of this name (compared without regard to case): two tokens of one
 * name cannot be told apart in the list, so revoking one would risk breaking the wrong integration.
 */
async function nameTaken(deps: Deps, accountId: string, name: string): Promise<boolean> {
  const wanted = sameNameKey(name);
  return (await listTokens(deps, accountId)).some((t) => !t.expired && sameNameKey(t.name) === wanted);
}

/** The form of a token name two names share when they would read as the same name in the list. */
function sameNameKey(name: string): string {
  return name.trim().normalize('NFC').toLowerCase();
}

/**
 * Creates a token for the account with no session or name check (tests and seeding; every door mints through
 * mintToken).
 */
export async function createToken(
  deps: Deps,
  accountId: string,
  input: { name: string; expiry: string; readOnly?: boolean },
): Promise<{ id: string; token: string }> {
  const choice = EXPIRY_CHOICES[Object.hasOwn(EXPIRY_CHOICES, input.expiry) ? input.expiry : DEFAULT_EXPIRY]!;
  const token = TOKEN_PREFIX + randomToken(deps.random, 32);
  const id = newId(deps.random);
  const now = deps.clock.now();
  await insertToken(deps.db, {
    id,
    account_id: accountId,
    name: input.name,
    token_hash: sha256(token),
    created_at: now,
    expires_at: choice.days === null ? null : now + choice.days * DAY_MS,
    read_only: input.readOnly ? 1 : 0,
  });
  return { id, token };
}

/** The account's own tokens. */
export async function listTokens(deps: Deps, accountId: string): Promise<TokenSummary[]> {
  const now = deps.clock.now();
  return (await listTokensOf(deps.db, accountId)).map((r) => ({
    id: r.id,
    name: r.name,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    lastUsedAt: r.last_used_at,
    expired: r.expires_at !== null && r.expires_at <= now,
    readOnly: r.read_only === 1,
  }));
}

/** Revokes one of the account's own tokens; a foreign or stale id is a no-op. Says whether one was revoked. */
export async function revokeToken(deps: Deps, accountId: string, id: string): Promise<boolean> {
  return (await deleteTokenOf(deps.db, accountId, id)) > 0;
}

/**
 * Revokes every token of the account at once (recovery: an administrator's act, a used reset link, "sign out
 * everywhere" when asked). Nothing caches a token: the next request with any of them answers 401 on every instance.
 * Returns how many were revoked. Who may do it is the caller's rule.
 */
export async function revokeAccountTokens(db: Kysely<DB> | Transaction<DB>, accountId: string): Promise<number> {
  return deleteTokensOfAccount(db, accountId);
}

/**
 * The account a presented token acts as; undefined when unknown, malformed, expired, revoked, or its account removed or
 * suspended.
 */
export async function authenticateToken(deps: Deps, presented: string): Promise<ApiAccount | undefined> {
  if (!TOKEN_SHAPE.test(presented)) return undefined;
  const row = await findTokenWithAccount(deps.db, sha256(presented));
  if (!row) return undefined;
  const now = deps.clock.now();
  if (row.expires_at !== null && row.expires_at <= now) return undefined;
  // Checked at every use, never by deleting: the token works again once the account is reactivated.
  if (row.suspended_at !== null) return undefined;
  if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_EVERY_MS) {
    await touchToken(deps.db, row.tokenId, now, LAST_USED_EVERY_MS);
  }
  return { id: row.id, username: row.username, role: row.role, tokenId: row.tokenId, readOnly: row.read_only === 1 };
}

export type BearerResult =
  | { ok: true; account: ApiAccount }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterMs: number };

/**
 * Bad bearer tokens per client address (IPv6 by /64): 30 in 15 minutes lock the address out of /api/ for 15 minutes.
 */
function bearerKey(address: string): ThrottleKey {
  return { key: `bearer:addr:${throttleBucket(address)}`, policy: ADDRESS_POLICY };
}

/**
 * authenticateToken for a request from `address`, throttled per address: a token that fails is counted, and an address
 * over its limit is answered 429 for its bad tokens. A good token is looked up first and always works, so others
 * behind the same NAT (or IPv6 /64) cannot lock it out; a locked address's bad tokens cost one read each, no write.
 */
export async function authenticateBearer(deps: Deps, presented: string, address: string): Promise<BearerResult> {
  const account = await authenticateToken(deps, presented);
  if (account) return { ok: true, account };
  return countBadBearer(deps, address);
}

/**
 * Counts a bad bearer token from `address` against the one per-address limit every bearer door shares (the API's
 * personal tokens and the /metrics token): 'invalid' when counted, 'throttled' when the address is already over it.
 * Its counters are auth_throttle rows, deleted by housekeeping once they can no longer matter.
 */
export async function countBadBearer(deps: Deps, address: string): Promise<Exclude<BearerResult, { ok: true }>> {
  const key = bearerKey(address);
  const reservation = await reserveAttempt(deps, [key]);
  if (!reservation.ok) return { ok: false, reason: 'throttled', retryAfterMs: reservation.retryAfterMs };
  await settleAttempt(deps, reservation, false);
  return { ok: false, reason: 'invalid' };
}

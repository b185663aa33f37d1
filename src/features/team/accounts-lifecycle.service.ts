// An account's page and the acts that need no last-admin guard: sign out everywhere, revoking its API tokens, and
// moving authored records.
import type { Deps } from '../../deps.ts';
import { findAccountById } from '../auth/accounts.repo.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import { endAccountSessions, listOwnSessions } from '../auth/sessions.service.ts';
import { listTokens, revokeAccountTokens, type TokenSummary } from '../tokens/tokens.service.ts';
import { findLiveResetExpiry } from '../reset/reset.repo.ts';
import {
  countAuthored,
  countCredentials,
  countLiveInvitationsBy,
  findTeamAccount,
  listAccounts,
  lockAccount,
  moveAuthored,
  type TeamAccount,
  withFactors,
} from './team.repo.ts';

/** What the account page shows about one account. */
export interface AccountDetail {
  /** With its second factors: whether TOTP is on, how many passkeys. */
  account: TeamAccount;
  /** Rows it authored (created_by) over every authored table: while any remain, removal is refused. */
  authored: number;
  /** Active accounts other than this one, which may receive its authored records. */
  heirs: Pick<TeamAccount, 'id' | 'username'>[];
  /** When its live password reset link stops working, if it has one. */
  resetLinkExpiresAt: number | undefined;
  /** Invitations it minted that can still be accepted: suspending it does not void them. */
  liveInvitations: number;
  /** Its live sessions (pending sign-ins included), unexpired API tokens and linked SSO identities. */
  sessions: number;
  tokens: number;
  identities: number;
  /** Every API token it has, expired ones included (name, created, last used: never the token or its hash). */
  tokenList: TokenSummary[];
}

/** The account page's data, or undefined when the account does not exist. */
export async function loadAccount(deps: Deps, accountId: string): Promise<AccountDetail | undefined> {
  const row = await findTeamAccount(deps.db, accountId);
  if (!row) return undefined;
  const now = deps.clock.now();
  const [account, authored, all, resetLinkExpiresAt, liveInvitations, sessions, credentials, tokenList] =
    await Promise.all([
      withFactors(deps.db, [row]).then(([a]) => a!),
      countAuthored(deps.db, accountId),
      listAccounts(deps.db),
      findLiveResetExpiry(deps.db, accountId, now),
      countLiveInvitationsBy(deps.db, accountId, now),
      listOwnSessions(deps, accountId, ''), // no session of the reader is among them: none is "current"
      countCredentials(deps.db, accountId, now),
      listTokens(deps, accountId),
    ]);
  const heirs = all
    .filter((a) => a.id !== accountId && a.suspended_at === null)
    .map((a) => ({ id: a.id, username: a.username }));
  return {
    account,
    authored,
    heirs,
    resetLinkExpiresAt,
    liveInvitations,
    sessions: sessions.length,
    ...credentials,
    tokenList,
  };
}

export type SignOutResult =
  | { ok: true; username: string; ended: number; revoked: number }
  | { ok: false; reason: 'not-found' | 'self' | 'not-admin' };

/**
 * Ends every session of the account, pending sign-ins included; its API tokens are untouched unless `revokeTokens`
 * (then every one is revoked in the same transaction). An administrator's own sessions are ended from Profile
 * (`actorId` equal to the account is refused; null is the host CLI).
 */
export async function signOutEverywhere(
  deps: Deps,
  input: AdminActor & { accountId: string; revokeTokens?: boolean },
): Promise<SignOutResult> {
  if (input.actorId === input.accountId) return { ok: false, reason: 'self' };
  if (!(await actorIsAdmin(deps, input))) return { ok: false, reason: 'not-admin' };
  return deps.db.transaction().execute(async (trx): Promise<SignOutResult> => {
    const account = await findAccountById(trx, input.accountId);
    if (!account) return { ok: false, reason: 'not-found' };
    const ended = await endAccountSessions(trx, account.id);
    const revoked = input.revokeTokens ? await revokeAccountTokens(trx, account.id) : 0;
    if (input.revokeTokens) logRevoked(deps, account.id, input.actorId, revoked);
    return { ok: true, username: account.username, ended, revoked };
  });
}

export type RevokeTokensResult =
  | { ok: true; username: string; revoked: number }
  | { ok: false; reason: 'not-admin' | 'not-found' | 'self' };

/**
 * Revokes every API token of another account (recovery after a leak, or before reactivating an account whose tokens
 * must not come back): they answer 401 from the next request on, on every instance. Only an active administrator (or
 * the host's command line) may; an administrator's own tokens are revoked one by one on its Profile ('self').
 */
export async function revokeAllTokens(
  deps: Deps,
  input: AdminActor & { accountId: string },
): Promise<RevokeTokensResult> {
  if (!(await actorIsAdmin(deps, input))) return { ok: false, reason: 'not-admin' };
  if (input.actorId === input.accountId) return { ok: false, reason: 'self' };
  return deps.db.transaction().execute(async (trx): Promise<RevokeTokensResult> => {
    const account = await findAccountById(trx, input.accountId);
    if (!account) return { ok: false, reason: 'not-found' };
    const revoked = await revokeAccountTokens(trx, account.id);
    logRevoked(deps, account.id, input.actorId, revoked);
    return { ok: true, username: account.username, revoked };
  });
}

export type ReassignResult =
  | { ok: true; moved: number; from: string; to: string }
  | { ok: false; reason: 'not-found' | 'same' | 'heir-not-found' | 'heir-suspended' | 'not-admin' };

/**
 * Moves every row `fromId` authored (created_by) to `toId`, an active account, in one transaction; afterwards the
 * account can be removed. The receiving account is locked first, so it cannot be suspended or removed meanwhile.
 * Only an administrator moves them ('not-admin').
 */
export async function reassignAuthored(
  deps: Deps,
  input: AdminActor & { fromId: string; toId: string },
): Promise<ReassignResult> {
  if (input.fromId === input.toId) return { ok: false, reason: 'same' };
  return deps.db.transaction().execute(async (trx): Promise<ReassignResult> => {
    if (!(await actorIsAdmin(deps, input, trx))) return { ok: false, reason: 'not-admin' };
    const heir = await lockAccount(trx, deps.dialect, input.toId);
    if (!heir) return { ok: false, reason: 'heir-not-found' };
    if (heir.suspended_at !== null) return { ok: false, reason: 'heir-suspended' };
    const from = await findAccountById(trx, input.fromId);
    if (!from) return { ok: false, reason: 'not-found' };
    const moved = await moveAuthored(trx, from.id, heir.id);
    return { ok: true, moved, from: from.username, to: heir.username };
  });
}

/** The log line of a revocation of every token of an account (never a token or its hash). */
function logRevoked(deps: Deps, accountId: string, actorId: string | null, revoked: number): void {
  deps.log.info(
    { event: 'api-tokens-revoked', account: accountId, actor: actorId ?? 'cli', revoked },
    'every API token of an account revoked',
  );
}

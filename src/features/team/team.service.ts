// Team administration: the list, role changes and suspension under the last-admin guard, second-factor re-enrolment,
// removal. An actorId of null is the host's CLI: no self-rules, but the guard on the last active admin still holds.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import { findAccountById, type Account } from '../auth/accounts.repo.ts';
import type { Actor } from '../auth/reauth-window.ts';
import { actorRecentlyConfirmed } from '../tokens/actor-confirmed.ts';
import { endAccountSessions } from '../auth/sessions.service.ts';
import type { Factors } from '../second-factor/factors.ts';
import { deletePasskeys } from '../second-factor/passkeys.repo.ts';
import {
  clearSecondFactor,
  deleteAccount,
  deleteRecoveryCodes,
  findTeamAccount,
  listAccounts,
  listAccountsPage,
  listOpenInvitations,
  lockAdminIds,
  setRole,
  setSuspended,
  type OpenInvitationRow,
  type Role,
  type TeamAccount,
  withFactors,
} from './team.repo.ts';

export { loadAccount, reassignAuthored, revokeAllTokens, signOutEverywhere } from './accounts-lifecycle.service.ts';
export { mintResetLink } from '../reset/reset.service.ts';

/** How many open invitations the team tab lists. */
const INVITATIONS_SHOWN = 100;

/** What the team tab shows. */
export interface Team {
  accounts: TeamAccount[];
  invitations: (OpenInvitationRow & { state: 'pending' | 'expired' })[];
}

/** Every account and every open invitation, with each invitation's state at the current time. */
export async function loadTeam(deps: Deps): Promise<Team> {
  const [accounts, invitations] = await Promise.all([
    listAccounts(deps.db).then((rows) => withFactors(deps.db, rows)),
    listInvitations(deps, { limit: INVITATIONS_SHOWN }),
  ]);
  return { accounts, invitations };
}

/** Where a page of a list starts: just after this (time, id) of the previous page's last row. */
export interface Keyset {
  createdAt: number;
  id: string;
}

/**
 * One page of accounts, oldest first, for a list that pages by keyset (the API); only of `role` and `state` when given.
 */
export async function listAccountsAfter(
  deps: Deps,
  page: { after?: Keyset; limit: number; role?: Role; state?: 'active' | 'suspended' },
): Promise<TeamAccount[]> {
  return withFactors(deps.db, await listAccountsPage(deps.db, page));
}

/** One account as the team list shows it, or undefined when it does not exist. */
export async function findAccount(deps: Deps, accountId: string): Promise<TeamAccount | undefined> {
  const row = await findTeamAccount(deps.db, accountId);
  return row && (await withFactors(deps.db, [row]))[0];
}

/**
 * One page of open invitations (neither spent nor revoked), newest first, each with its state at the current time;
 * only those in `state` when given.
 */
export async function listInvitations(
  deps: Deps,
  page: { after?: Keyset; limit: number; state?: 'pending' | 'expired' },
): Promise<Team['invitations']> {
  const now = deps.clock.now();
  const expired = page.state === undefined ? undefined : { is: page.state === 'expired', now };
  const rows = await listOpenInvitations(deps.db, { after: page.after, limit: page.limit, expired });
  return rows.map((i) => ({ ...i, state: now < i.expires_at ? 'pending' : 'expired' }));
}

/** Refusals shared by every team act. */
type Common = { ok: false; reason: 'not-admin' | 'not-found' };

export type RoleResult =
  | { ok: true; username: string; changed: boolean }
  | Common
  | { ok: false; reason: 'self' | 'last-admin' | 'reauth-required' };
/** `cleared`: the second factors the account had, all of them now gone. */
export type ReenrolResult = { ok: true; username: string; cleared: Factors } | Common | { ok: false; reason: 'self' };
export type SuspendResult =
  | { ok: true; username: string; changed: boolean }
  | Common
  | { ok: false; reason: 'self' | 'last-admin' };
export type ReactivateResult = { ok: true; username: string; changed: boolean } | Common;
export type RemoveResult =
  | { ok: true; username: string }
  | Common
  | { ok: false; reason: 'self' | 'last-admin' | 'confirmation' }
  | { ok: false; reason: 'author'; username: string };

/**
 * Runs `act` in one transaction after locking every active admin row and re-reading the target, so concurrent guards
 * see each other's committed changes. `removesAdmin` says whether the act takes an active admin away (demotion,
 * suspension, removal): if no other active admin would remain it is refused as 'last-admin'; an actor demoted,
 * suspended or removed meanwhile is 'not-admin'. A null actor (the host CLI) is not checked.
 */
async function guarded<R>(
  deps: Deps,
  input: { actorId: string | null; targetId: string },
  check: (target: Account) => { removesAdmin: boolean; refusal?: R },
  act: (trx: Transaction<DB>, target: Account) => Promise<R>,
): Promise<R | Common | { ok: false; reason: 'last-admin' }> {
  return deps.db.transaction().execute(async (trx) => {
    const adminIds = await lockAdminIds(trx, deps.dialect);
    const target = await findAccountById(trx, input.targetId);
    if (!target) return { ok: false, reason: 'not-found' } as const;
    const { removesAdmin, refusal } = check(target);
    if (refusal) return refusal;
    if (removesAdmin && target.role === 'admin' && adminIds.every((id) => id === target.id)) {
      return { ok: false, reason: 'last-admin' } as const;
    }
    if (input.actorId !== null && !adminIds.includes(input.actorId)) return { ok: false, reason: 'not-admin' } as const;
    return act(trx, target);
  });
}

/**
 * Changes another account's role; never one's own, and never leaving zero admins. Making an account an administrator
 * hands out every power of the service, so it needs the same confirmation as an admin invitation (see
 * actorRecentlyConfirmed): else 'reauth-required' and nothing changes. Demotion needs none.
 */
export async function changeRole(deps: Deps, input: Actor & { targetId: string; role: Role }): Promise<RoleResult> {
  if (input.actorId === input.targetId) return { ok: false, reason: 'self' };
  const confirmed = input.role !== 'admin' || (await actorRecentlyConfirmed(deps, input));
  return guarded(
    deps,
    input,
    (target): { removesAdmin: boolean; refusal?: RoleResult } => ({
      removesAdmin: input.role !== 'admin',
      refusal:
        target.role === input.role
          ? { ok: true, username: target.username, changed: false }
          : confirmed
            ? undefined
            : { ok: false, reason: 'reauth-required' },
    }),
    async (trx, target): Promise<RoleResult> => {
      await setRole(trx, target.id, input.role);
      return { ok: true, username: target.username, changed: true };
    },
  );
}

/**
 * Clears every second factor of another account, in one transaction: its TOTP secret, every passkey, and its recovery
 * codes; it is asked to enrol again at its next sign-in. Its password and sessions stay as they are. Never one's own
 * (null is the host CLI): that would strip a second factor without Profile's "Confirm it's you".
 */
export async function reenrolSecondFactor(
  deps: Deps,
  input: { actorId: string | null; targetId: string },
): Promise<ReenrolResult> {
  if (input.actorId === input.targetId) return { ok: false, reason: 'self' };
  const result = await guarded(
    deps,
    input,
    () => ({ removesAdmin: false }),
    async (trx, target): Promise<ReenrolResult> => {
      await clearSecondFactor(trx, target.id);
      const passkeys = await deletePasskeys(trx, target.id);
      await deleteRecoveryCodes(trx, target.id);
      return { ok: true, username: target.username, cleared: { totp: target.totp_enabled === 1, passkeys } };
    },
  );
  // removesAdmin is false, so the guard never answers 'last-admin' here.
  return result.ok || result.reason !== 'last-admin' ? result : { ok: false, reason: 'not-admin' };
}

/**
 * Suspends another account: it can no longer sign in (password, SSO) or use its API tokens, and its sessions and
 * pending sign-ins end in the same transaction. Its tokens are kept, so they work again after reactivation.
 */
export async function suspendAccount(
  deps: Deps,
  input: { actorId: string | null; accountId: string },
): Promise<SuspendResult> {
  if (input.actorId === input.accountId) return { ok: false, reason: 'self' };
  return guarded(
    deps,
    { actorId: input.actorId, targetId: input.accountId },
    (target): { removesAdmin: boolean; refusal?: SuspendResult } => ({
      removesAdmin: true,
      refusal: target.suspended_at !== null ? { ok: true, username: target.username, changed: false } : undefined,
    }),
    async (trx, target): Promise<SuspendResult> => {
      await setSuspended(trx, target.id, deps.clock.now());
      await endAccountSessions(trx, target.id);
      return { ok: true, username: target.username, changed: true };
    },
  );
}

/** Lifts a suspension: the account may sign in again and its unrevoked, unexpired API tokens work again. */
export async function reactivateAccount(
  deps: Deps,
  input: { actorId: string | null; accountId: string },
): Promise<ReactivateResult> {
  const result = await guarded(
    deps,
    { actorId: input.actorId, targetId: input.accountId },
    (target): { removesAdmin: boolean; refusal?: ReactivateResult } => ({
      removesAdmin: false,
      refusal: target.suspended_at === null ? { ok: true, username: target.username, changed: false } : undefined,
    }),
    async (trx, target): Promise<ReactivateResult> => {
      await setSuspended(trx, target.id, null);
      return { ok: true, username: target.username, changed: true };
    },
  );
  return result.ok || result.reason !== 'last-admin' ? result : { ok: false, reason: 'not-admin' };
}

/**
 * Removes another account when `confirmation` is exactly its username. The database refuses to remove an author
 * of rows (non-cascading created_by foreign keys); that refusal comes back as reason 'author'.
 */
export async function removeAccount(
  deps: Deps,
  input: { actorId: string | null; targetId: string; confirmation: string },
): Promise<RemoveResult> {
  if (input.actorId === input.targetId) return { ok: false, reason: 'self' };
  let targetName = '';
  try {
    return await guarded(
      deps,
      input,
      (target): { removesAdmin: boolean; refusal?: RemoveResult } => ({
        removesAdmin: true,
        refusal:
          input.confirmation.normalize('NFC') === target.username ? undefined : { ok: false, reason: 'confirmation' },
      }),
      async (trx, target): Promise<RemoveResult> => {
        targetName = target.username;
        await deleteAccount(trx, target.id);
        return { ok: true, username: target.username };
      },
    );
  } catch (err) {
    if (isForeignKeyViolation(err)) return { ok: false, reason: 'author', username: targetName };
    throw err;
  }
}

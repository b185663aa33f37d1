// Password sign-in: the same answer and about the same time for unknown users and wrong passwords, throttled.
import type { Deps } from '../../deps.ts';
import { findAccountById, findAccountByUsername, type Account } from './accounts.repo.ts';
import { verifyPassword } from './passwords.ts';
import { ACCOUNT_POLICY, ADDRESS_POLICY, clearFailures, lockedFor, recordFailure } from './throttle.service.ts';

export type SignInResult =
  | { ok: true; account: Account }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/** Throttle keys for an attempt: one per account name (existing or not) and one per client address. */
export function throttleKeys(kind: string, username: string, address: string): { account: string; address: string } {
  return { account: `${kind}:acct:${username.trim().toLowerCase()}`, address: `${kind}:addr:${address}` };
}

/** Checks a username and password. Unknown names verify against a dummy hash, so timing does not tell them apart. */
export async function signInWithPassword(
  deps: Deps,
  input: { username: string; password: string; address: string },
): Promise<SignInResult> {
  const keys = throttleKeys('password', input.username, input.address);
  const wait = await lockedFor(deps, [keys.account, keys.address]);
  if (wait > 0) return { ok: false, reason: 'locked', retryAfterMs: wait };

  const account = await findAccountByUsername(deps.db, input.username.trim());
  const valid = await verifyPassword(account?.password_hash, input.password);
  if (!account || !valid) {
    await recordFailure(deps, keys.account, ACCOUNT_POLICY);
    await recordFailure(deps, keys.address, ADDRESS_POLICY);
    return { ok: false, reason: 'invalid' };
  }
  await clearFailures(deps, keys.account);
  return { ok: true, account };
}

/**
 * Re-authentication of a signed-in account (password change, second-factor enrolment, new recovery codes).
 * Counts against the same throttle as sign-in, so these forms cannot be used to guess a password faster.
 */
export async function confirmPassword(
  deps: Deps,
  input: { accountId: string; password: string; address: string },
): Promise<SignInResult> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'invalid' };
  const keys = throttleKeys('password', account.username, input.address);
  const wait = await lockedFor(deps, [keys.account, keys.address]);
  if (wait > 0) return { ok: false, reason: 'locked', retryAfterMs: wait };
  if (!(await verifyPassword(account.password_hash, input.password))) {
    await recordFailure(deps, keys.account, ACCOUNT_POLICY);
    await recordFailure(deps, keys.address, ADDRESS_POLICY);
    return { ok: false, reason: 'invalid' };
  }
  await clearFailures(deps, keys.account);
  return { ok: true, account };
}

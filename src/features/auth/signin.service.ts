// Password sign-in: the same answer and about the same time for unknown users and wrong passwords, throttled.
import type { Deps } from '../../deps.ts';
import { throttleBucket } from '../../net/client-address.ts';
import { findAccountById, findAccountByUsername, usernameKey, type Account } from './accounts.repo.ts';
import { verifyPassword } from './passwords.ts';
import type { DeviceToken } from './device.ts';
import { ACCOUNT_ADDRESS_POLICY, ACCOUNT_POLICY, ADDRESS_POLICY, DEVICE_POLICY, reserveAttempt, settleAttempt, type ThrottleKey } from './throttle.service.ts';

export type SignInResult =
  | { ok: true; account: Account }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/**
 * Throttle keys for one kind of secret (password, totp, ...): per (account name, address), per account name
 * from anywhere, and per address. Names are keyed whether or not the account exists, so locks reveal nothing.
 */
export function throttleKeys(kind: string, accountName: string, address: string): { pair: ThrottleKey; account: ThrottleKey; address: ThrottleKey } {
  const name = usernameKey(accountName.trim());
  const bucket = throttleBucket(address);
  return {
    pair: { key: `${kind}:pair:${name}:${bucket}`, policy: ACCOUNT_ADDRESS_POLICY },
    account: { key: `${kind}:acct:${name}`, policy: ACCOUNT_POLICY },
    address: { key: `${kind}:addr:${bucket}`, policy: ADDRESS_POLICY },
  };
}

/**
 * Checks a username and password. Unknown names verify against a dummy hash, so timing does not tell them apart.
 * A client showing a verified device token of the very account it signs in to is held to a per-device limit instead
 * of the per-account one (which anyone can fill); the pair and address limits hold for every client.
 */
export async function signInWithPassword(
  deps: Deps,
  input: { username: string; password: string; address: string; device?: DeviceToken },
): Promise<SignInResult> {
  const keys = throttleKeys('password', input.username, input.address);
  // Looked up early only for a device token: whether it matches changes nothing in the answer, only the limit.
  const early = input.device ? await findAccountByUsername(deps.db, input.username.trim()) : undefined;
  const owned = input.device && early?.id === input.device.accountId ? input.device : undefined;
  const guard = owned ? deviceThrottleKey(owned) : keys.account;
  const reservation = await reserveAttempt(deps, [keys.pair, guard, keys.address]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };

  const account = input.device ? early : await findAccountByUsername(deps.db, input.username.trim());
  const valid = await verifyPassword(account?.password_hash, input.password);
  // The owner's success clears only its own keys: the per-account count (an attack in progress) stays.
  await settleAttempt(deps, reservation, Boolean(account && valid), [keys.pair.key, guard.key]);
  if (!account || !valid) return { ok: false, reason: 'invalid' };
  return { ok: true, account };
}

/** The throttle key of one device token (its random id), governed by DEVICE_POLICY. */
function deviceThrottleKey(device: DeviceToken): ThrottleKey {
  return { key: `password:device:${device.nonce}`, policy: DEVICE_POLICY };
}

/**
 * Re-authentication of a signed-in account (password change, second-factor enrolment, new recovery codes).
 * Counts against the same throttle keys as sign-in, so these forms cannot be used to guess a password faster.
 */
export async function confirmPassword(
  deps: Deps,
  input: { accountId: string; password: string; address: string },
): Promise<SignInResult> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'invalid' };
  const keys = throttleKeys('password', account.username, input.address);
  const reservation = await reserveAttempt(deps, [keys.pair, keys.account, keys.address]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
  const valid = await verifyPassword(account.password_hash, input.password);
  await settleAttempt(deps, reservation, valid, [keys.pair.key, keys.account.key]);
  return valid ? { ok: true, account } : { ok: false, reason: 'invalid' };
}

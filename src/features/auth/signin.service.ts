// Password sign-in: the same answer and about the same time for unknown users and wrong passwords, throttled.
import type { Deps } from '../../deps.ts';
import { throttleBucket } from '../../net/client-address.ts';
import { findAccountById, findAccountByUsername, usernameKey, type Account } from './accounts.repo.ts';
import { verifyPassword } from './passwords.ts';
import type { DeviceToken } from './device.ts';
import { stageAfterFirstFactor, type Stage } from './sessions.service.ts';
import {
  ACCOUNT_ADDRESS_POLICY,
  ACCOUNT_POLICY,
  ADDRESS_POLICY,
  DEVICE_POLICY,
  reserveAttempt,
  SESSION_POLICY,
  settleAttempt,
  type ThrottleKey,
} from './throttle.service.ts';

export type SignInResult =
  | { ok: true; account: Account; stage: Stage }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'suspended' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/**
 * Throttle keys for one kind of secret (password, totp, ...): per (account name, address), per account name
 * from anywhere, and per address. Names are keyed whether or not the account exists, so locks reveal nothing.
 */
export function throttleKeys(
  kind: string,
  accountName: string,
  address: string,
): { pair: ThrottleKey; account: ThrottleKey; address: ThrottleKey } {
  const name = usernameKey(accountName.trim());
  const bucket = throttleBucket(address);
  return {
    pair: { key: `${kind}:pair:${name}:${bucket}`, policy: ACCOUNT_ADDRESS_POLICY },
    account: { key: `${kind}:acct:${name}`, policy: ACCOUNT_POLICY },
    address: { key: `${kind}:addr:${bucket}`, policy: ADDRESS_POLICY },
  };
}

/**
 * The sign-in throttle of one client address: failed passwords and failed passkey sign-ins count against it alike, so
 * switching from one to the other buys no further guesses.
 */
export function signInAddressKey(address: string): ThrottleKey {
  return throttleKeys('password', '', address).address;
}

/** Sign-in with a passkey alone (both factors in one), as the sign-in page uses it. */
export interface PasskeySignIn {
  /** How long a pending passkey sign-in (its challenge and cookie) lasts. */
  ttlMs: number;
  /**
   * The options of a new ceremony, its challenge held for the pending sign-in `pending` (its cookie's value); or, with
   * nothing held, the refusal's words, status and when to ask again (a locked address, too many pending sign-ins).
   */
  options(
    deps: Deps,
    input: { pending: string; origin: string; address: string },
  ): Promise<{ ok: true; options: unknown } | { ok: false; words: string; status: 429 | 503; retryAfterMs: number }>;
  /** Verifies the browser's answer: the account, or the refusal's words and status. */
  signIn(
    deps: Deps,
    input: { pending: string | undefined; origin: string; answer: string; address: string },
  ): Promise<{ ok: true; account: Account } | { ok: false; words: string; status: 400 | 401 | 403 | 409 | 429 }>;
}

/** Whether an account that passed its first factor owes a second one (the second-factor feature decides: app.ts). */
export type OwesSecondFactor = (deps: Deps, account: Account) => Promise<boolean>;

/**
 * Checks a username and password. Unknown names verify against a dummy hash, so timing does not tell them apart.
 * A client showing a verified device token of the very account it signs in to, issued since its last password change,
 * is held to a per-device limit instead of the per-account one (which anyone can fill); the pair and address limits
 * hold for every client.
 */
export async function signInWithPassword(
  deps: Deps,
  input: { username: string; password: string; address: string; device?: DeviceToken },
  owesSecondFactor: OwesSecondFactor,
): Promise<SignInResult> {
  const checked = await checkPassword(deps, input);
  const result: SignInResult = checked.ok
    ? { ...checked, stage: stageAfterFirstFactor(checked.account, await owesSecondFactor(deps, checked.account)) }
    : checked;
  deps.metrics?.signIn(
    result.ok
      ? result.stage === 'totp'
        ? 'second_factor_owed'
        : 'success'
      : result.reason === 'locked'
        ? 'throttled'
        : 'failure',
  );
  return result;
}

/** signInWithPassword without the counting. */
async function checkPassword(
  deps: Deps,
  input: { username: string; password: string; address: string; device?: DeviceToken },
): Promise<{ ok: true; account: Account } | Exclude<SignInResult, { ok: true }>> {
  const keys = throttleKeys('password', input.username, input.address);
  // Looked up early only for a device token: whether it matches changes nothing in the answer, only the limit.
  const early = input.device ? await findAccountByUsername(deps.db, input.username.trim()) : undefined;
  const owned = early && input.device && ownsDevice(early, input.device) ? input.device : undefined;
  const guard = owned ? deviceThrottleKey(owned) : keys.account;
  const reservation = await reserveAttempt(deps, [keys.pair, guard, keys.address]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };

  const account = input.device ? early : await findAccountByUsername(deps.db, input.username.trim());
  const valid = await verifyPassword(account?.password_hash, input.password);
  // The owner's success clears only its own keys: the per-account count (an attack in progress) stays.
  await settleAttempt(deps, reservation, Boolean(account && valid), [keys.pair.key, guard.key]);
  if (!account || !valid) return { ok: false, reason: 'invalid' };
  // Said only after the right password, so suspension is no oracle for a guesser.
  if (account.suspended_at !== null) return { ok: false, reason: 'suspended' };
  return { ok: true, account };
}

/** Whether the token was issued to this account under its current credentials (a password change voids older ones). */
function ownsDevice(account: Account, device: DeviceToken): boolean {
  return account.id === device.accountId && account.credentials_version === device.credentialsVersion;
}

/** The throttle key of one device token (its random id), governed by DEVICE_POLICY. */
function deviceThrottleKey(device: DeviceToken): ThrottleKey {
  return { key: `password:device:${device.nonce}`, policy: DEVICE_POLICY };
}

/**
 * Re-authentication from a session that already proved the password (password change, second-factor enrolment, new
 * recovery codes). Counts against the pair and address keys like sign-in, and against a per-session key in place of
 * the per-username one: anyone can fill that, and it must not lock the owner out of its own account's settings;
 * a session guesses no faster than one address.
 */
export async function confirmPassword(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; password: string; address: string },
): Promise<
  { ok: true; account: Account } | { ok: false; reason: 'invalid' } | Extract<SignInResult, { reason: 'locked' }>
> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'invalid' };
  const keys = throttleKeys('password', account.username, input.address);
  const session = sessionConfirmKey(input.sessionIdHash);
  const reservation = await reserveAttempt(deps, [keys.pair, session, keys.address]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
  const valid = await verifyPassword(account.password_hash, input.password);
  await settleAttempt(deps, reservation, valid, [keys.pair.key, session.key]);
  return valid ? { ok: true, account } : { ok: false, reason: 'invalid' };
}

/** The per-session limit on re-confirmations (a password, or an authenticator code, typed by a signed-in session). */
export function sessionConfirmKey(sessionIdHash: string): ThrottleKey {
  return { key: `password:sess:${sessionIdHash}`, policy: SESSION_POLICY };
}

// The second factor: enrolment (fresh secret, confirmed by a code, recovery codes issued), the two-factor step
// at sign-in (a current code or one recovery code, each accepted once, throttled), and recovery-code regeneration.
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { findAccountById } from './accounts.repo.ts';
import {
  hashRecoveryCode,
  newRecoveryCode,
  normaliseRecoveryCode,
  RECOVERY_CODE_COUNT,
  recoveryCodeMatches,
} from './recovery-codes.ts';
import {
  acceptTotpStep,
  clearEnrolPrompt,
  countUnusedRecoveryCodes,
  enableTotp,
  replaceRecoveryCodes,
  spendRecoveryCode,
  storePendingSecret,
  unusedRecoveryCodes,
} from './second-factor.repo.ts';
import { confirmPassword, throttleKeys } from './signin.service.ts';
import { reserveAttempt, settleAttempt } from './throttle.service.ts';
import { matchTotpStep, newTotpSecret, normaliseTotpInput, totpUri } from './totp.ts';

/** A secret awaiting its confirming code, with what the user needs to add it to an app. */
export interface PendingEnrolment {
  secret: string;
  uri: string;
}

export type PasswordRefusal = { ok: false; reason: 'invalid-password' } | { ok: false; reason: 'locked'; retryAfterMs: number };

/** Where an account's second factor stands, for the profile. */
export async function secondFactorState(deps: Deps, accountId: string): Promise<{ enabled: boolean; recoveryCodesLeft: number }> {
  const account = await findAccountById(deps.db, accountId);
  const enabled = account?.totp_enabled === 1;
  return { enabled, recoveryCodesLeft: enabled ? await countUnusedRecoveryCodes(deps.db, accountId) : 0 };
}

/** Starts enrolment after a fresh password check: a new 160-bit secret replaces any earlier pending one. */
export async function startEnrolment(
  deps: Deps,
  input: { accountId: string; password: string; address: string },
): Promise<{ ok: true; pending: PendingEnrolment } | PasswordRefusal | { ok: false; reason: 'already-enabled' }> {
  const check = await confirmPassword(deps, input);
  if (!check.ok) return passwordRefusal(check);
  if (check.account.totp_enabled === 1) return { ok: false, reason: 'already-enabled' };
  const secret = newTotpSecret(deps.random);
  if (!(await storePendingSecret(deps.db, input.accountId, secret))) return { ok: false, reason: 'already-enabled' };
  return { ok: true, pending: { secret, uri: totpUri(secret, check.account.username) } };
}

/** The pending enrolment, if one was started and not yet confirmed (to show the secret again after a wrong code). */
export async function pendingEnrolment(deps: Deps, accountId: string): Promise<PendingEnrolment | undefined> {
  const account = await findAccountById(deps.db, accountId);
  if (!account || account.totp_enabled === 1 || !account.totp_secret) return undefined;
  return { secret: account.totp_secret, uri: totpUri(account.totp_secret, account.username) };
}

/** Completes enrolment with a valid current code: TOTP on, a fresh set of recovery codes returned (shown once). */
export async function confirmEnrolment(
  deps: Deps,
  input: { accountId: string; code: string },
): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; reason: 'no-pending' | 'invalid-code' }> {
  const pending = await pendingEnrolment(deps, input.accountId);
  if (!pending) return { ok: false, reason: 'no-pending' };
  const step = matchTotpStep(pending.secret, normaliseTotpInput(input.code), deps.clock.now());
  if (step === null) return { ok: false, reason: 'invalid-code' };
  const { codes, rows } = freshRecoveryCodes(deps);
  const enabled = await deps.db.transaction().execute(async (trx) => {
    if (!(await enableTotp(trx, input.accountId, pending.secret, step))) return false;
    await replaceRecoveryCodes(trx, input.accountId, rows, deps.clock.now());
    return true;
  });
  return enabled ? { ok: true, recoveryCodes: codes } : { ok: false, reason: 'no-pending' };
}

/** Declines enrolment at sign-in; false when TOTP was turned on meanwhile (the session must then owe a code). */
export function skipEnrolment(deps: Deps, accountId: string): Promise<boolean> {
  return clearEnrolPrompt(deps.db, accountId);
}

export type SecondFactorResult =
  | { ok: true; via: 'totp' | 'recovery-code' }
  | { ok: false; reason: 'invalid' | 'not-enrolled' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/**
 * The two-factor step: a current TOTP code (one step of drift either side, each step accepted once and never an
 * older one after a newer one) or one unused recovery code. Attempts are throttled like passwords (reserved before
 * the check): per (account, address), per account and per address.
 */
export async function verifySecondFactor(
  deps: Deps,
  input: { accountId: string; code: string; address: string },
): Promise<SecondFactorResult> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account || account.totp_enabled !== 1 || !account.totp_secret) return { ok: false, reason: 'not-enrolled' };
  const keys = throttleKeys('totp', account.username, input.address);
  const reservation = await reserveAttempt(deps, [keys.pair, keys.account, keys.address]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };

  const typed = normaliseTotpInput(input.code);
  const via = /^[0-9]{6}$/.test(typed) ? 'totp' : 'recovery-code';
  const accepted =
    via === 'totp' ? await acceptTotpCode(deps, account.id, account.totp_secret, typed) : await acceptRecoveryCode(deps, account.id, input.code);
  await settleAttempt(deps, reservation, accepted, [keys.pair.key, keys.account.key]);
  return accepted ? { ok: true, via } : { ok: false, reason: 'invalid' };
}

/** Issues a new set of recovery codes after a fresh password check; the old set stops working. */
export async function regenerateRecoveryCodes(
  deps: Deps,
  input: { accountId: string; password: string; address: string },
): Promise<{ ok: true; recoveryCodes: string[] } | PasswordRefusal | { ok: false; reason: 'not-enrolled' }> {
  const check = await confirmPassword(deps, input);
  if (!check.ok) return passwordRefusal(check);
  if (check.account.totp_enabled !== 1) return { ok: false, reason: 'not-enrolled' };
  const { codes, rows } = freshRecoveryCodes(deps);
  await deps.db.transaction().execute((trx) => replaceRecoveryCodes(trx, input.accountId, rows, deps.clock.now()));
  return { ok: true, recoveryCodes: codes };
}

async function acceptTotpCode(deps: Deps, accountId: string, secret: string, code: string): Promise<boolean> {
  const step = matchTotpStep(secret, code, deps.clock.now());
  return step !== null && (await acceptTotpStep(deps.db, accountId, secret, step));
}

async function acceptRecoveryCode(deps: Deps, accountId: string, typed: string): Promise<boolean> {
  const canonical = normaliseRecoveryCode(typed);
  if (!canonical) return false;
  const match = (await unusedRecoveryCodes(deps.db, accountId)).find((row) => recoveryCodeMatches(row.code_hash, canonical));
  return match !== undefined && (await spendRecoveryCode(deps.db, match.id, deps.clock.now()));
}

function freshRecoveryCodes(deps: Deps) {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => newRecoveryCode(deps.random));
  const rows = codes.map((code) => ({ id: newId(deps.random), code_hash: hashRecoveryCode(deps.random, normaliseRecoveryCode(code)!) }));
  return { codes, rows };
}

function passwordRefusal(check: { ok: false; reason: 'invalid' } | { ok: false; reason: 'locked'; retryAfterMs: number }): PasswordRefusal {
  return check.reason === 'locked' ? check : { ok: false, reason: 'invalid-password' };
}

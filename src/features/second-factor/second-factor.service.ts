// The second factor: enrolment (fresh secret, confirmed by a code, recovery codes issued), the two-factor step
// at sign-in (a current code or one recovery code, each accepted once, throttled), and recovery-code regeneration.
import { isForeignKeyViolation } from '../../db/errors.ts';
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { throttleBucket } from '../../net/client-address.ts';
import { findAccountById, type Account } from '../auth/accounts.repo.ts';
import { factorsOf, hasSecondFactor, type Factors } from './factors.ts';
import {
  hashRecoveryCode,
  newRecoveryCode,
  normaliseRecoveryCode,
  RECOVERY_CODE_COUNT,
  recoveryCodeMatches,
} from './recovery-codes.ts';
import { countPasskeys } from './passkeys.repo.ts';
import {
  acceptTotpStep,
  clearEnrolPrompt,
  countUnusedRecoveryCodes,
  deleteExpiredEnrolments,
  deletePendingEnrolments,
  enableTotp,
  findPendingEnrolment,
  replaceRecoveryCodes,
  savePendingEnrolment,
  spendRecoveryCode,
  takePendingEnrolment,
  unusedRecoveryCodes,
} from './second-factor.repo.ts';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import { endSession } from '../auth/sessions.service.ts';
import { sessionConfirmKey } from '../auth/signin.service.ts';
import {
  ADDRESS_POLICY,
  reserveAttempt,
  SECOND_FACTOR_ACCOUNT_POLICY,
  SECOND_FACTOR_SESSION_POLICY,
  settleAttempt,
  type ThrottleKey,
} from '../auth/throttle.service.ts';
import { matchTotpStep, newTotpSecret, normaliseTotpInput, totpUri } from './totp.ts';

/** A secret awaiting its confirming code, with what the user needs to add it to an app. */
export interface PendingEnrolment {
  secret: string;
  uri: string;
}

/** The act needs a fresh "Confirm it's you" in this session first (reauth.service.ts). */
export type ReauthRequired = { ok: false; reason: 'reauth-required' };

/** The account's second factors (TOTP on, how many passkeys); none for an unknown account. */
export async function factorsOfAccount(deps: Deps, accountId: string): Promise<Factors> {
  const account = await findAccountById(deps.db, accountId);
  if (!account) return { totp: false, passkeys: 0 };
  return (await factorsOf(deps.db, [account])).get(account.id)!;
}

/**
 * Whether an account that has just passed its first factor (password or SSO) owes a second one: it has TOTP on or a
 * passkey. app.ts hands this to the sign-in page, which sits below this feature.
 */
export async function owesSecondFactor(deps: Deps, account: Pick<Account, 'id' | 'totp_enabled'>): Promise<boolean> {
  return hasSecondFactor((await factorsOf(deps.db, [account])).get(account.id)!);
}

/** Where an account's second factors stand, for the profile. */
export async function secondFactorState(
  deps: Deps,
  accountId: string,
): Promise<{ enabled: boolean; factors: Factors; recoveryCodesLeft: number }> {
  const factors = await factorsOfAccount(deps, accountId);
  const any = hasSecondFactor(factors);
  return {
    enabled: factors.totp,
    factors,
    recoveryCodesLeft: any ? await countUnusedRecoveryCodes(deps.db, accountId) : 0,
  };
}

/** How long a started enrolment waits for its confirming code. */
export const ENROLMENT_PENDING_MS = 10 * 60_000;

/** The session a pending enrolment belongs to: only it can see, replace or confirm its secret. */
export interface EnrolmentOwner {
  accountId: string;
  sessionIdHash: string;
}

/**
 * Starts enrolment in a session that confirmed itself within 10 minutes (or stands at the enrolment offer right after
 * its first factor): a new 160-bit secret, bound to this session for 10 minutes, replaces this session's earlier
 * pending one. Other sessions of the account never see it.
 */
export async function startEnrolment(
  deps: Deps,
  input: EnrolmentOwner,
): Promise<
  | { ok: true; pending: PendingEnrolment }
  | ReauthRequired
  | { ok: false; reason: 'already-enabled' }
  | { ok: false; reason: 'session-ended' }
> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'session-ended' };
  if (account.totp_enabled === 1) return { ok: false, reason: 'already-enabled' };
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
  const secret = newTotpSecret(deps.random);
  const now = deps.clock.now();
  try {
    await savePendingEnrolment(deps.db, {
      sessionIdHash: input.sessionIdHash,
      secret,
      now,
      expiresAt: now + ENROLMENT_PENDING_MS,
    });
  } catch (err) {
    if (isForeignKeyViolation(err)) return { ok: false, reason: 'session-ended' };
    throw err;
  }
  return { ok: true, pending: { secret, uri: totpUri(secret, account.username) } };
}

/**
 * This session's pending enrolment, if it started one that has not expired (to show the secret again after a wrong
 * code).
 */
export async function pendingEnrolment(deps: Deps, owner: EnrolmentOwner): Promise<PendingEnrolment | undefined> {
  const account = await findAccountById(deps.db, owner.accountId);
  if (!account || account.totp_enabled === 1) return undefined;
  const secret = await findPendingEnrolment(deps.db, owner.sessionIdHash, owner.accountId, deps.clock.now());
  return secret ? { secret, uri: totpUri(secret, account.username) } : undefined;
}

/**
 * Completes this session's enrolment with a valid current code: TOTP on (only if it is still off), every pending
 * enrolment of the account dropped, and, when TOTP is the account's first second factor (no passkey yet), a fresh set
 * of recovery codes returned (shown once). An account that already holds a passkey keeps the codes it has.
 */
export async function confirmEnrolment(
  deps: Deps,
  input: EnrolmentOwner & { code: string },
): Promise<{ ok: true; recoveryCodes?: string[] } | { ok: false; reason: 'no-pending' | 'invalid-code' }> {
  const pending = await pendingEnrolment(deps, input);
  if (!pending) return { ok: false, reason: 'no-pending' };
  const step = matchTotpStep(pending.secret, normaliseTotpInput(input.code), deps.clock.now());
  if (step === null) return { ok: false, reason: 'invalid-code' };
  const { codes, rows } = freshRecoveryCodes(deps);
  const enabled = await deps.db.transaction().execute(async (trx) => {
    // The account row first, so concurrent confirmations of one account queue in one order (no deadlock on PostgreSQL).
    const lock = trx.selectFrom('accounts').select('id').where('id', '=', input.accountId);
    await (deps.dialect === 'postgres' ? lock.forUpdate() : lock).execute();
    if (!(await takePendingEnrolment(trx, input.sessionIdHash, pending.secret))) return 'no';
    if (!(await enableTotp(trx, input.accountId, pending.secret, step))) return 'no';
    await deletePendingEnrolments(trx, input.accountId);
    if ((await countPasskeys(trx, [input.accountId])).has(input.accountId)) return 'kept';
    await replaceRecoveryCodes(trx, input.accountId, rows, deps.clock.now());
    return 'issued';
  });
  if (enabled === 'no') return { ok: false, reason: 'no-pending' };
  return enabled === 'issued' ? { ok: true, recoveryCodes: codes } : { ok: true };
}

/** Deletes expired pending enrolments (housekeeping). */
export function pruneEnrolments(deps: Deps): Promise<void> {
  return deleteExpiredEnrolments(deps.db, deps.clock.now());
}

/**
 * Declines enrolment at sign-in; false when TOTP was turned on or a passkey added meanwhile (the session must then owe
 * its second factor).
 */
export async function skipEnrolment(deps: Deps, accountId: string): Promise<boolean> {
  if ((await countPasskeys(deps.db, [accountId])).has(accountId)) return false;
  return clearEnrolPrompt(deps.db, accountId);
}

export type SecondFactorResult =
  | { ok: true; via: 'totp' | 'recovery-code' }
  | { ok: false; reason: 'invalid' | 'not-enrolled' | 'session-ended' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/**
 * Throttle keys for the second-factor step (codes and passkeys), far stricter than for passwords: per pending session
 * (a few failures end it, so the password is owed again), per account (escalating locks) and per client address.
 */
export function secondFactorKeys(
  accountId: string,
  sessionIdHash: string,
  address: string,
): { session: ThrottleKey; account: ThrottleKey; address: ThrottleKey } {
  return {
    session: { key: `totp:session:${sessionIdHash}`, policy: SECOND_FACTOR_SESSION_POLICY },
    account: { key: `totp:account:${accountId}`, policy: SECOND_FACTOR_ACCOUNT_POLICY },
    address: { key: `totp:addr:${throttleBucket(address)}`, policy: ADDRESS_POLICY },
  };
}

/**
 * The two-factor step: a current TOTP code (one step of drift either side, each step accepted once and never an
 * older one after a newer one) or one unused recovery code. Attempts are reserved before the check against the
 * second-factor policies; the session that used up its attempts is ended ('session-ended').
 */
export async function verifySecondFactor(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; code: string; address: string },
): Promise<SecondFactorResult> {
  const result = await checkSecondFactor(deps, input);
  deps.metrics?.signIn(result.ok ? 'success' : result.reason === 'locked' ? 'throttled' : 'failure');
  return result;
}

/** verifySecondFactor without the counting. */
async function checkSecondFactor(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; code: string; address: string },
): Promise<SecondFactorResult> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account || !hasSecondFactor((await factorsOf(deps.db, [account])).get(account.id)!))
    return { ok: false, reason: 'not-enrolled' };
  return countedStepAnswer(deps, { ...input, accountId: account.id }, async () => {
    const typed = normaliseTotpInput(input.code);
    const via = /^[0-9]{6}$/.test(typed) ? 'totp' : 'recovery-code';
    // Six digits are a TOTP code, which only an account with TOTP on can give; anything else may be a recovery code.
    const accepted =
      via === 'totp'
        ? account.totp_enabled === 1 &&
          account.totp_secret !== null &&
          (await acceptTotpCode(deps, account.id, account.totp_secret, typed))
        : await acceptRecoveryCode(deps, account.id, input.code);
    return accepted ? { ok: true, via } : { ok: false, reason: 'invalid' };
  });
}

/**
 * One answer at the second-factor step (a code or a passkey), counted against the session's, the account's and the
 * address's code limits: `check` runs only when none of them is locked. Another key's lock refuses with its wait; the
 * session's own lock, whether reached before or by this failed answer, ends the session (the password is owed again).
 */
export async function countedStepAnswer<R extends { ok: true } | { ok: false }>(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; address: string },
  check: () => Promise<R>,
): Promise<R | { ok: false; reason: 'locked'; retryAfterMs: number } | { ok: false; reason: 'session-ended' }> {
  const keys = secondFactorKeys(input.accountId, input.sessionIdHash, input.address);
  const reservation = await reserveAttempt(deps, [keys.session, keys.account, keys.address]);
  if (!reservation.ok) {
    if (reservation.key !== keys.session.key)
      return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
    await endSession(deps, input.sessionIdHash);
    return { ok: false, reason: 'session-ended' };
  }
  const result = await check();
  const settled = await settleAttempt(deps, reservation, result.ok, [keys.session.key, keys.account.key]);
  if (!result.ok && settled.locked.includes(keys.session.key)) {
    await endSession(deps, input.sessionIdHash);
    return { ok: false, reason: 'session-ended' };
  }
  return result;
}

/**
 * A current authenticator code typed by a signed-in session to confirm itself (reauth.service.ts). Counted against
 * the session's re-confirmation limit (shared with passwords), the account's escalating code limit and the address;
 * the accepted time step is spent, so the same code cannot then sign in elsewhere.
 */
export async function confirmAuthenticatorCode(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; code: string; address: string },
): Promise<{ ok: true } | { ok: false; reason: 'invalid' } | { ok: false; reason: 'locked'; retryAfterMs: number }> {
  const account = await findAccountById(deps.db, input.accountId);
  if (account?.totp_enabled !== 1 || !account.totp_secret) return { ok: false, reason: 'invalid' };
  const keys = secondFactorKeys(account.id, input.sessionIdHash, input.address);
  const session = sessionConfirmKey(input.sessionIdHash);
  const reservation = await reserveAttempt(deps, [session, keys.account, keys.address]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
  const accepted = await acceptTotpCode(deps, account.id, account.totp_secret, normaliseTotpInput(input.code));
  await settleAttempt(deps, reservation, accepted, [session.key, keys.account.key]);
  return accepted ? { ok: true } : { ok: false, reason: 'invalid' };
}

/**
 * Issues a new set of recovery codes in a session that confirmed itself within 10 minutes; the old set stops working.
 */
export async function regenerateRecoveryCodes(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string },
): Promise<{ ok: true; recoveryCodes: string[] } | ReauthRequired | { ok: false; reason: 'not-enrolled' }> {
  if (!hasSecondFactor(await factorsOfAccount(deps, input.accountId))) return { ok: false, reason: 'not-enrolled' };
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
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
  const match = (await unusedRecoveryCodes(deps.db, accountId)).find((row) =>
    recoveryCodeMatches(row.code_hash, canonical),
  );
  return match !== undefined && (await spendRecoveryCode(deps.db, match.id, deps.clock.now()));
}

/** A new set of recovery codes: the codes to show once, and the rows (salted hashes) to store. */
export function freshRecoveryCodes(deps: Deps) {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => newRecoveryCode(deps.random));
  const rows = codes.map((code) => ({
    id: newId(deps.random),
    code_hash: hashRecoveryCode(deps.random, normaliseRecoveryCode(code)!),
  }));
  return { codes, rows };
}

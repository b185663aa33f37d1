// Signing in with a passkey: alone on the sign-in page (a discoverable credential, both factors in one), or as the
// second factor after a password or SSO. @simplewebauthn/server verifies each answer (origin, relying party, the
// challenge, user presence and verification, the signature); this file holds the rules around it: the challenge
// single-use and held for the one pending sign-in or session that asked, the credential the account's own, a signature
// counter that goes backwards refused (the key may have been cloned), the throttles and the bounds on anonymous asks for
// sign-in options (each holds a challenge), and the counting for /metrics.
import {
  generateAuthenticationOptions,
  verifyAuthenticationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import type { Deps, PasskeyOutcome } from '../../deps.ts';
import { sha256 } from '../../deps.ts';
import { throttleBucket } from '../../net/client-address.ts';
import { findAccountById, type Account } from '../auth/accounts.repo.ts';
import { signInAddressKey } from '../auth/signin.service.ts';
import {
  ADDRESS_POLICY,
  refusalNow,
  reserveAttempt,
  settleAttempt,
  type ThrottleKey,
} from '../auth/throttle.service.ts';
import {
  authenticationSchema,
  CHALLENGE_TTL_MS,
  handleMatches,
  holdChallenge,
  parseAnswer,
  transportsOf,
  verdict,
  type Locked,
  type Refused,
  type RelyingParty,
} from './passkeys.ceremony.ts';
import {
  countLiveChallenges,
  findPasskeyByCredentialId,
  listPasskeys,
  recordPasskeyUse,
  takeChallenge,
  type PasskeyRow,
} from './passkeys.repo.ts';
import { hasSecondFactor } from './factors.ts';
import { countedStepAnswer, factorsOfAccount } from './second-factor.service.ts';

// ---- Sign-in with a passkey alone (/login) ----

/** Pending passkey sign-ins svc holds at most, all addresses together, unless the config says otherwise. */
export const PENDING_SIGN_INS_MAX = 10_000;

/**
 * The per-address limit on asking for sign-in options, apart from the sign-in throttle (asking is no failed attempt):
 * 30 asks in a 15-minute window, then none until the window ends. Each ask holds a challenge, so one address cannot
 * fill the table; a successful passkey sign-in gives its ask back, so holders sharing an address do not run out.
 */
function optionsKey(address: string): ThrottleKey {
  return { key: `passkey:options:${throttleBucket(address)}`, policy: ADDRESS_POLICY };
}

export type SignInOptionsResult =
  | { ok: true; options: PublicKeyCredentialRequestOptionsJSON }
  | Locked
  | { ok: false; reason: 'busy' };

/**
 * The options of a passkey sign-in, its challenge held for the pending sign-in named by `pending` (its cookie). Refused,
 * writing nothing, while the address is locked out of signing in (it learns so before its fingerprint or PIN is asked
 * for) and while svc holds as many pending sign-ins as it allows; counted in the address's limit on asking otherwise.
 */
export async function signInOptions(
  deps: Deps,
  input: { pending: string; rp: RelyingParty; address: string },
): Promise<SignInOptionsResult> {
  const result = await checkOptions(deps, input);
  if (!result.ok) countPasskey(deps, 'sign_in', result);
  return result;
}

async function checkOptions(
  deps: Deps,
  input: { pending: string; rp: RelyingParty; address: string },
): Promise<SignInOptionsResult> {
  const locked = await refusalNow(deps, [signInAddressKey(input.address)]);
  if (locked) return { ok: false, reason: 'locked', retryAfterMs: locked.retryAfterMs };
  const max = deps.config.pendingPasskeySignInsMax ?? PENDING_SIGN_INS_MAX;
  if ((await countLiveChallenges(deps.db, 'sign-in', deps.clock.now())) >= max) return { ok: false, reason: 'busy' };
  // Counted, and left so (never settled): a full window refuses further asks until it ends.
  const reservation = await reserveAttempt(deps, [optionsKey(input.address)]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
  const options = await generateAuthenticationOptions({
    rpID: input.rp.id,
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  });
  await holdChallenge(deps, sha256(input.pending), 'sign-in', options.challenge);
  return { ok: true, options };
}

export type PasskeySignInResult =
  | { ok: true; account: Account }
  | Refused<'expired' | 'malformed' | 'invalid' | 'unknown-credential' | 'cloned' | 'suspended'>
  | Locked;

/**
 * Signs in with a discoverable passkey: both factors in one. Counted in the sign-in throttle per address like a
 * password; an attempt refused by a lock writes nothing (the challenge stays untouched too).
 */
export async function signInWithPasskey(
  deps: Deps,
  input: { pending: string | undefined; rp: RelyingParty; answer: string; address: string },
): Promise<PasskeySignInResult> {
  const result = await checkSignIn(deps, input);
  countPasskey(deps, 'sign_in', result);
  return result;
}

async function checkSignIn(
  deps: Deps,
  input: { pending: string | undefined; rp: RelyingParty; answer: string; address: string },
): Promise<PasskeySignInResult> {
  const reservation = await reserveAttempt(deps, [signInAddressKey(input.address)]);
  if (!reservation.ok) return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
  const checked = await checkAssertion(deps, {
    ownerHash: input.pending ? sha256(input.pending) : undefined,
    purpose: 'sign-in',
    rp: input.rp,
    answer: input.answer,
  });
  await settleAttempt(deps, reservation, checked.ok);
  if (!checked.ok) return checked;
  const account = await findAccountById(deps.db, checked.passkey.account_id);
  if (!account) return { ok: false, reason: 'unknown-credential' };
  // Said only after a verified answer, so suspension is no oracle.
  if (account.suspended_at !== null) return { ok: false, reason: 'suspended' };
  // The ask for options this sign-in used is given back: an address shared by many holders is not locked out by them.
  await settleAttempt(deps, { keys: [optionsKey(input.address)] }, true);
  return { ok: true, account };
}

// ---- A passkey as the second factor (after a password or SSO) ----

/** The options of the second-factor step for this pending session: one of the account's own credentials. */
export async function secondFactorOptions(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; rp: RelyingParty },
): Promise<{ ok: true; options: PublicKeyCredentialRequestOptionsJSON } | Refused<'not-enrolled'>> {
  const own = await listPasskeys(deps.db, input.accountId);
  if (own.length === 0) return { ok: false, reason: 'not-enrolled' };
  const options = await generateAuthenticationOptions({
    rpID: input.rp.id,
    allowCredentials: own.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  });
  await holdChallenge(deps, input.sessionIdHash, 'second-factor', options.challenge);
  return { ok: true, options };
}

export type PasskeyStepResult =
  | { ok: true }
  | Refused<'expired' | 'malformed' | 'invalid' | 'cloned' | 'not-enrolled' | 'session-ended'>
  | Locked;

/**
 * The second-factor step answered with a passkey: one of this account's credentials, for this session's challenge.
 * Throttled like codes (per pending session, account and address); a session that used up its attempts is ended. An
 * account left with no second factor (an administrator reset it meanwhile) starts over, as the code step does, and the
 * answer counts in no limit.
 */
export async function verifyPasskeyStep(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; rp: RelyingParty; answer: string; address: string },
): Promise<PasskeyStepResult> {
  const result = await checkStep(deps, input);
  countPasskey(deps, 'second_factor', result);
  return result;
}

async function checkStep(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; rp: RelyingParty; answer: string; address: string },
): Promise<PasskeyStepResult> {
  if (!hasSecondFactor(await factorsOfAccount(deps, input.accountId))) return { ok: false, reason: 'not-enrolled' };
  return countedStepAnswer(deps, input, async (): Promise<PasskeyStepResult> => {
    const checked = await checkAssertion(deps, {
      ownerHash: input.sessionIdHash,
      purpose: 'second-factor',
      rp: input.rp,
      answer: input.answer,
      accountId: input.accountId,
    });
    if (checked.ok) return { ok: true };
    // A credential this account does not hold is simply not an answer to its step.
    return { ok: false, reason: checked.reason === 'unknown-credential' ? 'invalid' : checked.reason };
  });
}

/**
 * The shared core of both assertion ceremonies: takes the owner's challenge (single use), finds the credential (of
 * `accountId` when given), has the library verify origin, RP id, challenge, user presence and verification and the
 * signature, then moves the stored counter forward, refusing one that went backwards.
 */
async function checkAssertion(
  deps: Deps,
  input: {
    ownerHash: string | undefined;
    purpose: 'sign-in' | 'second-factor';
    rp: RelyingParty;
    answer: string;
    accountId?: string;
  },
): Promise<
  { ok: true; passkey: PasskeyRow } | Refused<'expired' | 'malformed' | 'invalid' | 'unknown-credential' | 'cloned'>
> {
  const now = deps.clock.now();
  const challenge = input.ownerHash ? await takeChallenge(deps.db, input.ownerHash, input.purpose, now) : undefined;
  if (!challenge) return { ok: false, reason: 'expired' };
  const response = parseAnswer(authenticationSchema, input.answer);
  if (!response) return { ok: false, reason: 'malformed' };
  const passkey = await findPasskeyByCredentialId(deps.db, response.id);
  if (!passkey || (input.accountId !== undefined && passkey.account_id !== input.accountId))
    return { ok: false, reason: 'unknown-credential' };
  if (!handleMatches(response.response.userHandle, passkey.account_id)) return { ok: false, reason: 'invalid' };
  // A discoverable sign-in must name its account: the authenticator always sends the handle for those.
  if (input.purpose === 'sign-in' && response.response.userHandle === undefined)
    return { ok: false, reason: 'invalid' };
  const info = await verdict(
    verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: input.rp.origin,
      expectedRPID: input.rp.id,
      // The counter is compared below, once the signature is known to be genuine: a forged answer cannot raise the
      // "cloned" alarm.
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: 0,
      },
      requireUserVerification: true,
    }).then((v) => (v.verified ? v.authenticationInfo : undefined)),
  );
  if (!info) return { ok: false, reason: 'invalid' };
  const counter = info.newCounter;
  const regressed = (counter > 0 || passkey.counter > 0) && counter <= passkey.counter;
  if (!regressed && (await recordPasskeyUse(deps.db, passkey.id, { counter, backedUp: info.credentialBackedUp, now })))
    return { ok: true, passkey };
  // Not recorded: either the counter went backwards (here, or against a use that got there first), or the credential
  // went meanwhile (removed, the second factor reset, the account deleted), which is no sign of a clone.
  const stored = regressed ? passkey : await findPasskeyByCredentialId(deps.db, passkey.credential_id);
  if (!stored || stored.id !== passkey.id) return { ok: false, reason: 'unknown-credential' };
  deps.log.warn(
    { accountId: passkey.account_id, passkeyId: passkey.id, storedCounter: stored.counter, counter },
    'passkey: signature counter went backwards; the key may have been cloned',
  );
  return { ok: false, reason: 'cloned' };
}

/** Counts a passkey step for /metrics by its outcome's class (a fixed set of labels). */
function countPasskey(
  deps: Deps,
  step: 'sign_in' | 'second_factor',
  result: { ok: true } | { ok: false; reason: string },
): void {
  if (!deps.metrics) return;
  const outcome: PasskeyOutcome = result.ok ? 'success' : outcomeOf(result.reason);
  deps.metrics.passkey(step, outcome);
  // Refused before any answer was checked (a lock, too many pending sign-ins): throttled, not a failed attempt.
  const refusedUnchecked = outcome === 'throttled' || outcome === 'busy';
  deps.metrics.signIn(result.ok ? 'success' : refusedUnchecked ? 'throttled' : 'failure');
}

function outcomeOf(reason: string): PasskeyOutcome {
  switch (reason) {
    case 'locked':
      return 'throttled';
    case 'expired':
      return 'expired';
    case 'unknown-credential':
      return 'unknown_credential';
    case 'cloned':
      return 'cloned';
    case 'suspended':
      return 'suspended';
    case 'busy':
      return 'busy';
    default:
      return 'invalid';
  }
}

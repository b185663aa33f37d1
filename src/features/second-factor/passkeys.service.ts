// Passkeys (WebAuthn credentials): registration from Profile, sign-in with a passkey alone, and a passkey as the second
// factor after a password or SSO. @simplewebauthn/server builds every ceremony's options and verifies every answer;
// this file holds the rules around it. A challenge is random (the library's), held server-side for the one session or
// pending sign-in that asked, taken by the first answer and refused after 5 minutes. User verification is required,
// attestation is 'none', a credential id names one credential of one account, and a signature counter that goes
// backwards refuses the answer (the key may have been cloned).
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { z } from 'zod';
import type { WebauthnChallengesTable } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { Deps, PasskeyOutcome } from '../../deps.ts';
import { newId, sha256 } from '../../deps.ts';
import { findAccountById, type Account } from '../auth/accounts.repo.ts';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import { endSession } from '../auth/sessions.service.ts';
import { signInAddressKey } from '../auth/signin.service.ts';
import { reserveAttempt, settleAttempt } from '../auth/throttle.service.ts';
import {
  deleteExpiredChallenges,
  deleteOwnPasskey,
  findPasskeyByCredentialId,
  insertPasskey,
  listPasskeys,
  recordPasskeyUse,
  renamePasskey,
  saveChallenge,
  takeChallenge,
  type PasskeyRow,
} from './passkeys.repo.ts';
import { clearEnrolPrompt, deleteRecoveryCodes, replaceRecoveryCodes } from './second-factor.repo.ts';
import { freshRecoveryCodes, secondFactorKeys, type ReauthRequired } from './second-factor.service.ts';

/** How long a ceremony's challenge waits for its answer. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Longest name a passkey may carry. */
export const PASSKEY_NAME_MAX = 64;
/** Offered and accepted key algorithms: EdDSA, ES256, RS256, which every Node svc runs on verifies. */
const ALGORITHMS = [-8, -7, -257];

/** Who the ceremonies are for: the host of svc's external origin (a domain) and that origin. */
export interface RelyingParty {
  id: string;
  origin: string;
}

/** The relying party of an external origin: its hostname is the id, the origin is what the browser reports. */
export function relyingPartyOf(origin: string): RelyingParty {
  const url = new URL(origin);
  return { id: url.hostname, origin: url.origin };
}

/** Why a passkey answer is refused (the words are in passkeys.refusals.ts). */
export type PasskeyReason =
  | 'expired'
  | 'invalid'
  | 'unknown-credential'
  | 'cloned'
  | 'suspended'
  | 'already-registered'
  | 'not-enrolled'
  | 'session-ended';

type Refused<R extends PasskeyReason> = { ok: false; reason: R };
type Locked = { ok: false; reason: 'locked'; retryAfterMs: number };

const base64url = z
  .string()
  .max(4096)
  .regex(/^[A-Za-z0-9_-]*$/);
const credentialFields = {
  id: base64url.min(1),
  rawId: base64url.min(1),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};
const registrationSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url,
    attestationObject: base64url,
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});
const authenticationSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url,
    authenticatorData: base64url,
    signature: base64url,
    userHandle: base64url.optional(),
  }),
});

/** The browser's answer (the JSON the ceremony script posts), or undefined when it is not one. */
function parseAnswer<S extends z.ZodType>(schema: S, text: string): z.output<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The WebAuthn user handle of an account: its id's bytes, stable for the account's life and naming nothing else. */
function userHandleOf(accountId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(accountId, 'utf8'));
}

/** Whether an assertion's user handle (when the authenticator sent one) names the credential's account. */
function handleMatches(userHandle: string | undefined, accountId: string): boolean {
  return userHandle === undefined || Buffer.from(userHandle, 'base64url').toString('utf8') === accountId;
}

function transportsOf(row: PasskeyRow): AuthenticatorTransportFuture[] {
  return row.transports ? (row.transports.split(',') as AuthenticatorTransportFuture[]) : [];
}
type AuthenticatorTransportFuture = NonNullable<
  NonNullable<Parameters<typeof generateAuthenticationOptions>[0]['allowCredentials']>[number]['transports']
>[number];

/**
 * The library's verdict: what it verified, or undefined when it refused the answer. Its error messages quote the
 * challenge, so they are never logged nor shown.
 */
async function verdict<T>(verifying: Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await verifying;
  } catch {
    return undefined;
  }
}

async function holdChallenge(
  deps: Deps,
  ownerHash: string,
  purpose: WebauthnChallengesTable['purpose'],
  challenge: string,
): Promise<void> {
  await saveChallenge(deps.db, {
    owner_hash: ownerHash,
    purpose,
    challenge,
    expires_at: deps.clock.now() + CHALLENGE_TTL_MS,
  });
}

// ---- Registration (Profile, behind "Confirm it's you") ----

/**
 * The options of a new registration for this session, which must have confirmed itself within 10 minutes: a
 * discoverable credential with user verification, none of the account's own credentials again.
 */
export async function registrationOptions(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; rp: RelyingParty },
): Promise<{ ok: true; options: PublicKeyCredentialCreationOptionsJSON } | ReauthRequired | Refused<'session-ended'>> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'session-ended' };
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
  const own = await listPasskeys(deps.db, account.id);
  const options = await generateRegistrationOptions({
    rpName: 'svc',
    rpID: input.rp.id,
    userName: account.username,
    userDisplayName: account.username,
    userID: userHandleOf(account.id),
    attestationType: 'none',
    excludeCredentials: own.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
    timeout: CHALLENGE_TTL_MS,
  });
  await holdChallenge(deps, input.sessionIdHash, 'register', options.challenge);
  return { ok: true, options };
}

/** A sensible name when the holder typed none: what kind of key it is, numbered past the names already taken. */
function defaultName(taken: string[], synced: boolean, transports: string[]): string {
  const kind = synced
    ? 'Synced passkey'
    : transports.some((t) => t === 'usb' || t === 'nfc' || t === 'ble')
      ? 'Security key'
      : 'Passkey';
  if (!taken.includes(kind)) return kind;
  for (let n = 2; ; n++) if (!taken.includes(`${kind} ${n}`)) return `${kind} ${n}`;
}

/**
 * Verifies this session's registration answer and stores the credential under `name` (or a default). The first
 * second factor of the account (no TOTP, no passkey yet) comes with a fresh set of recovery codes, returned to be
 * shown once.
 */
export async function registerPasskey(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; rp: RelyingParty; answer: string; name: string },
): Promise<
  | { ok: true; name: string; recoveryCodes?: string[] }
  | ReauthRequired
  | Refused<'expired' | 'invalid' | 'already-registered' | 'session-ended'>
> {
  const challenge = await takeChallenge(deps.db, input.sessionIdHash, 'register', deps.clock.now());
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
  if (!challenge) return { ok: false, reason: 'expired' };
  const response = parseAnswer(registrationSchema, input.answer);
  if (!response) return { ok: false, reason: 'invalid' };
  const info = await verdict(
    verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: input.rp.origin,
      expectedRPID: input.rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    }).then((v) => (v.verified ? v.registrationInfo : undefined)),
  );
  if (!info) return { ok: false, reason: 'invalid' };
  const { codes, rows } = freshRecoveryCodes(deps);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      // The account row first, so concurrent registrations (and TOTP enrolments) of one account queue in one order.
      const lock = trx.selectFrom('accounts').select(['id', 'totp_enabled']).where('id', '=', input.accountId);
      const account = await (deps.dialect === 'postgres' ? lock.forUpdate() : lock).executeTakeFirst();
      if (!account) return { ok: false, reason: 'session-ended' } as const;
      const own = await listPasskeys(trx, account.id);
      const transports = info.credential.transports ?? [];
      const synced = info.credentialDeviceType === 'multiDevice';
      const typed = input.name.trim();
      const name =
        typed ||
        defaultName(
          own.map((p) => p.name),
          synced,
          transports,
        );
      await insertPasskey(trx, {
        id: newId(deps.random),
        account_id: account.id,
        credential_id: info.credential.id,
        public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        counter: info.credential.counter,
        transports: transports.join(','),
        device_type: info.credentialDeviceType,
        backed_up: info.credentialBackedUp ? 1 : 0,
        name,
        created_at: now,
        last_used_at: null,
      });
      const first = account.totp_enabled !== 1 && own.length === 0;
      if (!first) return { ok: true, name } as const;
      await replaceRecoveryCodes(trx, account.id, rows, now);
      // A second factor is on: the walk through TOTP enrolment at the next sign-in is no longer owed.
      await clearEnrolPrompt(trx, account.id);
      return { ok: true, name, recoveryCodes: codes } as const;
    });
  } catch (err) {
    // The credential id is registered already (to this account or another): one credential names one account.
    if (isUniqueViolation(err)) return { ok: false, reason: 'already-registered' };
    throw err;
  }
}

// ---- Sign-in with a passkey alone (/login) ----

/** The options of a passkey sign-in, its challenge held for the pending sign-in named by `pending` (its cookie). */
export async function signInOptions(
  deps: Deps,
  input: { pending: string; rp: RelyingParty },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: input.rp.id,
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  });
  await holdChallenge(deps, sha256(input.pending), 'sign-in', options.challenge);
  return options;
}

export type PasskeySignInResult =
  | { ok: true; account: Account }
  | Refused<'expired' | 'invalid' | 'unknown-credential' | 'cloned' | 'suspended'>
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
  | Refused<'expired' | 'invalid' | 'cloned' | 'not-enrolled' | 'session-ended'>
  | Locked;

/**
 * The second-factor step answered with a passkey: one of this account's credentials, for this session's challenge.
 * Throttled like codes (per pending session, account and address); a session that used up its attempts is ended.
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
  const keys = secondFactorKeys(input.accountId, input.sessionIdHash, input.address);
  const reservation = await reserveAttempt(deps, [keys.session, keys.account, keys.address]);
  if (!reservation.ok) {
    if (reservation.key !== keys.session.key)
      return { ok: false, reason: 'locked', retryAfterMs: reservation.retryAfterMs };
    await endSession(deps, input.sessionIdHash);
    return { ok: false, reason: 'session-ended' };
  }
  const checked = await checkAssertion(deps, {
    ownerHash: input.sessionIdHash,
    purpose: 'second-factor',
    rp: input.rp,
    answer: input.answer,
    accountId: input.accountId,
  });
  const settled = await settleAttempt(deps, reservation, checked.ok, [keys.session.key, keys.account.key]);
  if (checked.ok) return { ok: true };
  if (settled.locked.includes(keys.session.key)) {
    await endSession(deps, input.sessionIdHash);
    return { ok: false, reason: 'session-ended' };
  }
  // A credential this account does not hold is simply not an answer to its step.
  return { ok: false, reason: checked.reason === 'unknown-credential' ? 'invalid' : checked.reason };
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
): Promise<{ ok: true; passkey: PasskeyRow } | Refused<'expired' | 'invalid' | 'unknown-credential' | 'cloned'>> {
  const now = deps.clock.now();
  const challenge = input.ownerHash ? await takeChallenge(deps.db, input.ownerHash, input.purpose, now) : undefined;
  if (!challenge) return { ok: false, reason: 'expired' };
  const response = parseAnswer(authenticationSchema, input.answer);
  if (!response) return { ok: false, reason: 'invalid' };
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
  if (
    regressed ||
    !(await recordPasskeyUse(deps.db, passkey.id, { counter, backedUp: info.credentialBackedUp, now }))
  ) {
    deps.log.warn(
      { accountId: passkey.account_id, passkeyId: passkey.id, storedCounter: passkey.counter, counter },
      'passkey: signature counter went backwards; the key may have been cloned',
    );
    return { ok: false, reason: 'cloned' };
  }
  return { ok: true, passkey };
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
  deps.metrics.signIn(result.ok ? 'success' : outcome === 'throttled' ? 'throttled' : 'failure');
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
    default:
      return 'invalid';
  }
}

/** Deletes expired challenges (housekeeping; an expired one is refused already). */
export function pruneChallenges(deps: Deps): Promise<void> {
  return deleteExpiredChallenges(deps.db, deps.clock.now());
}

// ---- Profile: the list, renaming, removing ----

/** One passkey as its holder sees it: no credential id, no public key. */
export interface OwnPasskey {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  synced: boolean;
}

/** The account's passkeys, oldest first, as Profile lists them. */
export async function ownPasskeys(deps: Deps, accountId: string): Promise<OwnPasskey[]> {
  return (await listPasskeys(deps.db, accountId)).map((p) => ({
    id: p.id,
    name: p.name,
    createdAt: p.created_at,
    lastUsedAt: p.last_used_at,
    synced: p.device_type === 'multiDevice' || p.backed_up === 1,
  }));
}

/** The holder's new name for one of its passkeys, trimmed; a stale or foreign id is a no-op. */
export async function renameOwnPasskey(
  deps: Deps,
  input: { accountId: string; id: string; name: string },
): Promise<{ ok: true } | { ok: false; reason: 'name-empty' }> {
  const name = input.name.trim();
  if (!name) return { ok: false, reason: 'name-empty' };
  await renamePasskey(deps.db, input.accountId, input.id, name.slice(0, PASSKEY_NAME_MAX));
  return { ok: true };
}

/**
 * Removes one of the holder's passkeys (a session that confirmed itself within 10 minutes; a stale or foreign id is a
 * no-op). When it was the account's last second factor, its recovery codes go too: they stand in for a factor the
 * account no longer has, and the next first factor issues a fresh set.
 */
export async function removeOwnPasskey(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; id: string },
): Promise<{ ok: true; lastFactor: boolean } | ReauthRequired> {
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
  return deps.db.transaction().execute(async (trx) => {
    const lock = trx.selectFrom('accounts').select(['id', 'totp_enabled']).where('id', '=', input.accountId);
    const account = await (deps.dialect === 'postgres' ? lock.forUpdate() : lock).executeTakeFirst();
    if (!account || !(await deleteOwnPasskey(trx, account.id, input.id))) return { ok: true, lastFactor: false };
    const left = (await listPasskeys(trx, account.id)).length;
    const lastFactor = account.totp_enabled !== 1 && left === 0;
    if (lastFactor) await deleteRecoveryCodes(trx, account.id);
    return { ok: true, lastFactor };
  });
}

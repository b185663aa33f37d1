// Passkeys (WebAuthn credentials) on Profile: registration behind "Confirm it's you", the list, renaming, removing.
// @simplewebauthn/server builds the options and verifies the answer; this file holds the rules around it: attestation
// 'none', a discoverable credential with user verification, the challenge single-use and held for the one session
// that asked, a credential id naming one credential of one account, recovery codes with the first second factor.
// Signing in with a passkey (alone, or as the second factor) is passkey-sign-in.service.ts.
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isUniqueViolation } from '../../db/errors.ts';
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { findAccountById } from '../auth/accounts.repo.ts';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import {
  ALGORITHMS,
  CHALLENGE_TTL_MS,
  holdChallenge,
  parseAnswer,
  registrationSchema,
  transportsOf,
  userHandleOf,
  verdict,
  type Refused,
  type RelyingParty,
} from './passkeys.ceremony.ts';
import { deleteOwnPasskey, insertPasskey, listPasskeys, renamePasskey, takeChallenge } from './passkeys.repo.ts';
import { clearEnrolPrompt, deleteRecoveryCodes, replaceRecoveryCodes } from './second-factor.repo.ts';
import { freshRecoveryCodes, type ReauthRequired } from './second-factor.service.ts';

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
  | Refused<'expired' | 'malformed' | 'invalid' | 'already-registered' | 'session-ended'>
> {
  const challenge = await takeChallenge(deps.db, input.sessionIdHash, 'register', deps.clock.now());
  if (!(await recentlyConfirmed(deps, input.sessionIdHash))) return { ok: false, reason: 'reauth-required' };
  if (!challenge) return { ok: false, reason: 'expired' };
  const response = parseAnswer(registrationSchema, input.answer);
  if (!response) return { ok: false, reason: 'malformed' };
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

/**
 * The holder's new name for one of its passkeys, trimmed and stored whole (the form's rule bounds it in characters, not
 * UTF-16 units, so cutting here could split one); a stale or foreign id is a no-op.
 */
export async function renameOwnPasskey(
  deps: Deps,
  input: { accountId: string; id: string; name: string },
): Promise<{ ok: true } | { ok: false; reason: 'name-empty' }> {
  const name = input.name.trim();
  if (!name) return { ok: false, reason: 'name-empty' };
  await renamePasskey(deps.db, input.accountId, input.id, name);
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

// What the passkey ceremonies share: the relying party, the challenge's life, the shape of the browser's answers and
// how the library's verdict is taken. @simplewebauthn/server builds the options and verifies the answers; the rules
// around it are in passkeys.service.ts (registration, Profile) and passkey-sign-in.service.ts (both assertions).
import type { generateAuthenticationOptions } from '@simplewebauthn/server';
import { z } from 'zod';
import type { WebauthnChallengesTable } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { deleteExpiredChallenges, saveChallenge, type PasskeyRow } from './passkeys.repo.ts';

/** How long a ceremony's challenge waits for its answer. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Longest name a passkey may carry. */
export const PASSKEY_NAME_MAX = 64;
/** Offered and accepted key algorithms: EdDSA, ES256, RS256, which every Node svc runs on verifies. */
export const ALGORITHMS = [-8, -7, -257];

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
  | 'malformed'
  | 'invalid'
  | 'unknown-credential'
  | 'cloned'
  | 'suspended'
  | 'already-registered'
  | 'not-enrolled'
  | 'session-ended';

export type Refused<R extends PasskeyReason> = { ok: false; reason: R };
export type Locked = { ok: false; reason: 'locked'; retryAfterMs: number };

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
export const registrationSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url,
    attestationObject: base64url,
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});
export const authenticationSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url,
    authenticatorData: base64url,
    signature: base64url,
    userHandle: base64url.optional(),
  }),
});

/** The browser's answer (the JSON the ceremony script posts), or undefined when it is not one. */
export function parseAnswer<S extends z.ZodType>(schema: S, text: string): z.output<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The WebAuthn user handle of an account: its id's bytes, stable for the account's life and naming nothing else. */
export function userHandleOf(accountId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(accountId, 'utf8'));
}

/** Whether an assertion's user handle (when the authenticator sent one) names the credential's account. */
export function handleMatches(userHandle: string | undefined, accountId: string): boolean {
  return userHandle === undefined || Buffer.from(userHandle, 'base64url').toString('utf8') === accountId;
}

export function transportsOf(row: PasskeyRow): AuthenticatorTransportFuture[] {
  return row.transports ? (row.transports.split(',') as AuthenticatorTransportFuture[]) : [];
}
type AuthenticatorTransportFuture = NonNullable<
  NonNullable<Parameters<typeof generateAuthenticationOptions>[0]['allowCredentials']>[number]['transports']
>[number];

/**
 * The library's verdict: what it verified, or undefined when it refused the answer. Its error messages quote the
 * challenge, so they are never logged nor shown.
 */
export async function verdict<T>(verifying: Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await verifying;
  } catch {
    return undefined;
  }
}

export async function holdChallenge(
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

/** Deletes expired challenges (housekeeping; an expired one is refused already). */
export function pruneChallenges(deps: Deps): Promise<void> {
  return deleteExpiredChallenges(deps.db, deps.clock.now());
}

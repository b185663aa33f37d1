// TOTP (RFC 6238) through otpauth: SHA1, 6 digits, 30-second steps, one step of drift either side.
// Time always comes from the caller (deps.clock), never from the library's own Date.now().
import { Secret, TOTP } from 'otpauth';
import type { Random } from '../../deps.ts';

/** The parameters every authenticator app understands; fixed, so stored secrets need no parameters beside them. */
export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Steps of clock drift accepted either side of the current one. */
export const TOTP_WINDOW = 1;
/** Issuer shown in authenticator apps. */
export const TOTP_ISSUER = 'svc';
/** Secret length: 160 bits, the RFC 4226 recommendation for SHA1. */
const SECRET_BYTES = 20;

/** A fresh random secret, base32-encoded (the form apps and the otpauth:// URI use). */
export function newTotpSecret(random: Random): string {
  return new Secret({ buffer: Uint8Array.from(random.bytes(SECRET_BYTES)).buffer }).base32;
}

/** The otpauth:// URI an app scans to add the account. */
export function totpUri(secretBase32: string, username: string): string {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label: username,
    secret: Secret.fromBase32(secretBase32),
    ...TOTP_PARAMS,
  }).toString();
}

/** The time step (counter) a timestamp falls in. */
export function totpStep(now: number): number {
  return TOTP.counter({ period: TOTP_PARAMS.period, timestamp: now });
}

/**
 * The time step a code was generated for, when it is valid within the window at `now`; null otherwise.
 * Replay protection (a step accepted once only) is the caller's job, against the stored last step.
 */
export function matchTotpStep(secretBase32: string, code: string, now: number): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secretBase32),
    timestamp: now,
    window: TOTP_WINDOW,
    ...TOTP_PARAMS,
  });
  return delta === null ? null : totpStep(now) + delta;
}

/** The code for `now` (tests and the browser test generate codes as an app would). */
export function totpCode(secretBase32: string, now: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secretBase32), timestamp: now, ...TOTP_PARAMS });
}

/** Typed codes often carry spaces ("123 456"); strip them before matching. */
export function normaliseTotpInput(input: string): string {
  return input.replace(/\s+/g, '');
}

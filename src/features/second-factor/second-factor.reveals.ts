// What the second-factor pages hold for their one showing after a redirect (auth/reveal.tsx), and where it is shown.

/** A started enrolment's key, shown once on the confirming step. */
export const TOTP_KEY_REVEAL = 'totp-key';
/** A fresh set of recovery codes (a JSON array), shown once on GET /profile/recovery-codes. */
export const RECOVERY_CODES_REVEAL = 'recovery-codes';

/**
 * The page that shows fresh recovery codes once: after regeneration, after enrolment in the profile or at sign-in, or
 * after adding a first passkey.
 */
export function recoveryCodesPath(from: 'profile' | 'enrolment' | 'sign-in' | 'passkey'): string {
  return `/profile/recovery-codes?from=${from}`;
}

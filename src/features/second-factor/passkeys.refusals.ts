// Passkey refusals: the words every door shows (the sign-in page, the second-factor step, Profile) for each reason a
// passkey answer or act is refused, and the page's status. A reason without words does not compile.
import { CONFIRM_FIRST } from '../auth/reauth-window.ts';
import type { Refusal } from '../refusals.ts';
import type { PasskeyReason } from './passkeys.ceremony.ts';

/** The words of the suspended account's refusal, as the password sign-in says them. */
const SUSPENDED = 'This account is suspended, so it cannot sign in. Ask an administrator to reactivate it.';

export const PASSKEY_REFUSALS = {
  expired: {
    words: 'That passkey request expired or was already answered. Try again.',
    status: 409,
  },
  // Not an answer a browser sends (no JSON, or not the shape of a WebAuthn answer): nothing was verified.
  malformed: {
    words:
      'The passkey answer was incomplete or not understood, so nothing was checked. Try again, or use another way.',
    status: 400,
  },
  invalid: {
    words: 'The passkey could not be verified. Try again, or use another way.',
    status: 401,
  },
  'unknown-credential': {
    words:
      'This passkey is not registered with svc: it may have been removed, or the account’s second factors were reset. Sign in with your password.',
    status: 401,
  },
  cloned: {
    words:
      'This passkey was refused: its signature counter went backwards, so the key may have been cloned. Use another way in, and remove that passkey from your profile if you do not trust it.',
    status: 403,
  },
  suspended: { words: SUSPENDED, status: 403 },
  'already-registered': {
    words: 'That passkey is registered already. Each passkey can be added once.',
    status: 409,
  },
  'not-enrolled': { words: 'This account has no passkey. Use a code instead.', status: 409 },
  'session-ended': { words: 'Your session has ended. Sign in again.', status: 403 },
} satisfies Record<PasskeyReason, Refusal>;

/**
 * Asking for sign-in options while svc holds as many pending passkey sign-ins as it allows (a flood): the words the
 * ceremony script shows, and how long until it is worth asking again.
 */
export const PASSKEY_SIGN_INS_BUSY = {
  words: 'Too many passkey sign-ins are under way right now. Try again in a minute, or sign in with your password.',
  retryAfterMs: 60_000,
};

/** The refusal of an act that needs a fresh "Confirm it's you". */
export const PASSKEY_CONFIRM_FIRST = { words: CONFIRM_FIRST, status: 403 } satisfies Refusal;

// What the sign-in page (auth, below this feature) needs of passkeys, wired in by app.ts: whether an account that gave
// its password owes a second factor, and sign-in with a passkey alone, its refusals in their words.
import type { PasskeySignIn } from '../auth/signin.service.ts';
import { lockedMessage } from '../auth/login.views.tsx';
import { PASSKEY_REFUSALS, PASSKEY_SIGN_INS_BUSY } from './passkeys.refusals.ts';
import { signInOptions, signInWithPasskey } from './passkey-sign-in.service.ts';
import { CHALLENGE_TTL_MS, relyingPartyOf } from './passkeys.ceremony.ts';

export const passkeySignIn: PasskeySignIn = {
  ttlMs: CHALLENGE_TTL_MS,
  async options(deps, input) {
    const result = await signInOptions(deps, { ...input, rp: relyingPartyOf(input.origin) });
    if (result.ok) return result;
    if (result.reason === 'locked')
      return { ok: false, words: lockedMessage(result.retryAfterMs), status: 429, retryAfterMs: result.retryAfterMs };
    return { ok: false, status: 503, ...PASSKEY_SIGN_INS_BUSY };
  },
  async signIn(deps, input) {
    const result = await signInWithPasskey(deps, { ...input, rp: relyingPartyOf(input.origin) });
    if (result.ok) return result;
    if (result.reason === 'locked') return { ok: false, words: lockedMessage(result.retryAfterMs), status: 429 };
    const refusal = PASSKEY_REFUSALS[result.reason];
    return { ok: false, words: refusal.words, status: refusal.status };
  },
};

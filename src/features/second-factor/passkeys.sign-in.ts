// What the sign-in page (auth, below this feature) needs of passkeys, wired in by app.ts: whether an account that gave
// its password owes a second factor, and sign-in with a passkey alone, its refusals in their words.
import type { PasskeySignIn } from '../auth/signin.service.ts';
import { lockedMessage } from '../auth/login.views.tsx';
import { PASSKEY_REFUSALS } from './passkeys.refusals.ts';
import { signInOptions, signInWithPasskey } from './passkey-sign-in.service.ts';
import { CHALLENGE_TTL_MS, relyingPartyOf } from './passkeys.ceremony.ts';

export const passkeySignIn: PasskeySignIn = {
  ttlMs: CHALLENGE_TTL_MS,
  options: (deps, input) => signInOptions(deps, { pending: input.pending, rp: relyingPartyOf(input.origin) }),
  async signIn(deps, input) {
    const result = await signInWithPasskey(deps, { ...input, rp: relyingPartyOf(input.origin) });
    if (result.ok) return result;
    if (result.reason === 'locked') return { ok: false, words: lockedMessage(result.retryAfterMs), status: 429 };
    const refusal = PASSKEY_REFUSALS[result.reason];
    return { ok: false, words: refusal.words, status: refusal.status };
  },
};

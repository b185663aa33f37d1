// Re-authentication within a session ("Confirm it's you"): powerful self-service acts (minting an API token,
// regenerating recovery codes, starting second-factor enrolment) need the password, or a current authenticator code
// when the account has one, typed in THIS session within the last 10 minutes; a stolen session cookie alone is not
// enough. Attempts count against the same per-session limit as every password re-confirmation.
import type { Deps } from '../../deps.ts';
import { findAccountById } from '../auth/accounts.repo.ts';
import { setReauthedAt } from '../auth/reauth.repo.ts';
import { confirmAuthenticatorCode } from './second-factor.service.ts';
import { confirmPassword } from '../auth/signin.service.ts';
import { normaliseTotpInput } from './totp.ts';

export { recentlyConfirmed } from '../auth/reauth-window.ts';

export type ConfirmIdentityResult =
  | { ok: true }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/**
 * Whether the typed secret is meant as an authenticator code: the account has one, and the input is six digits
 * (spaces ignored) in fewer than 8 characters, so it can never be a password (those have at least 8).
 */
function meantAsCode(totpEnabled: boolean, typed: string): boolean {
  return totpEnabled && [...typed].length < 8 && /^[0-9]{6}$/.test(normaliseTotpInput(typed));
}

/**
 * Checks the password (or a current authenticator code) typed by a signed-in session and, when it is right, opens
 * that session's 10-minute window for powerful acts. Throttled per session, pair/account and address.
 */
export async function confirmIdentity(
  deps: Deps,
  input: { accountId: string; sessionIdHash: string; secret: string; address: string },
): Promise<ConfirmIdentityResult> {
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'invalid' };
  const owner = { accountId: input.accountId, sessionIdHash: input.sessionIdHash, address: input.address };
  const result = meantAsCode(account.totp_enabled === 1, input.secret)
    ? await confirmAuthenticatorCode(deps, { ...owner, code: input.secret })
    : await confirmPassword(deps, { ...owner, password: input.secret });
  if (!result.ok) return result.reason === 'locked' ? result : { ok: false, reason: 'invalid' };
  await setReauthedAt(deps.db, input.sessionIdHash, deps.clock.now());
  return { ok: true };
}

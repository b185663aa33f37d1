// Changing one's own password: the current one is required; every other session of the account ends, and so does
// any reset link an administrator minted for it.
import type { Deps } from '../../deps.ts';
import { endOtherSessions } from '../auth/sessions.service.ts';
import { hashPassword } from '../auth/passwords.ts';
import { confirmPassword } from '../auth/signin.service.ts';
import { voidReset } from '../reset/reset.repo.ts';

export type ChangePasswordResult =
  | { ok: true }
  | { ok: false; reason: 'invalid-password' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/**
 * Replaces the password after checking the current one (throttled like sign-in); keeps only the calling session.
 * The account's credentials version moves on in the same transaction and the calling session moves with it, so a
 * session created from a sign-in with the old password, even one racing this change, is refused from now on.
 */
export async function changePassword(
  deps: Deps,
  input: { accountId: string; keepSessionIdHash: string; current: string; next: string; address: string },
): Promise<ChangePasswordResult> {
  const check = await confirmPassword(deps, {
    accountId: input.accountId,
    sessionIdHash: input.keepSessionIdHash,
    password: input.current,
    address: input.address,
  });
  if (!check.ok) return check.reason === 'locked' ? check : { ok: false, reason: 'invalid-password' };
  const passwordHash = await hashPassword(input.next);
  const changed = await deps.db.transaction().execute(async (trx) => {
    // Only over the password just verified: a change that lost a race with another one is refused, not layered on.
    const row = await trx
      .updateTable('accounts')
      .set((eb) => ({ password_hash: passwordHash, credentials_version: eb('credentials_version', '+', 1) }))
      .where('id', '=', input.accountId)
      .where('password_hash', '=', check.account.password_hash)
      .returning('credentials_version')
      .executeTakeFirst();
    if (!row) return false;
    await trx
      .updateTable('sessions')
      .set({ credentials_version: row.credentials_version })
      .where('id_hash', '=', input.keepSessionIdHash)
      .execute();
    await endOtherSessions(trx, input.accountId, input.keepSessionIdHash);
    // A reset link minted before this change would outlive the password it was meant to replace.
    await voidReset(trx, input.accountId);
    return true;
  });
  return changed ? { ok: true } : { ok: false, reason: 'invalid-password' };
}

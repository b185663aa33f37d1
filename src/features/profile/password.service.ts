// Changing one's own password: the current one is required; every other session of the account ends.
import type { Deps } from '../../deps.ts';
import { endOtherSessions } from '../auth/sessions.service.ts';
import { hashPassword } from '../auth/passwords.ts';
import { confirmPassword } from '../auth/signin.service.ts';

export type ChangePasswordResult =
  | { ok: true }
  | { ok: false; reason: 'invalid-password' }
  | { ok: false; reason: 'locked'; retryAfterMs: number };

/** Replaces the password after checking the current one (throttled like sign-in); keeps only the calling session. */
export async function changePassword(
  deps: Deps,
  input: { accountId: string; keepSessionIdHash: string; current: string; next: string; address: string },
): Promise<ChangePasswordResult> {
  const check = await confirmPassword(deps, { accountId: input.accountId, password: input.current, address: input.address });
  if (!check.ok) return check.reason === 'locked' ? check : { ok: false, reason: 'invalid-password' };
  const passwordHash = await hashPassword(input.next);
  await deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', input.accountId).execute();
    await endOtherSessions(trx, input.accountId, input.keepSessionIdHash);
  });
  return { ok: true };
}

// The setup window: open while no account exists; a valid setup token creates the first admin, exactly once.
import type { Deps } from '../../deps.ts';
import { newId, randomToken, safeEqual, sha256 } from '../../deps.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { countAccounts, insertAccount } from '../auth/accounts.repo.ts';
import { hashPassword } from '../auth/passwords.ts';

/** A generated setup token stays valid this long (a restart prints a fresh one). */
export const SETUP_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

/** True while no account exists. */
export async function setupOpen(deps: Deps): Promise<boolean> {
  return (await countAccounts(deps.db)) === 0;
}

/**
 * At start-up: the token to print while setup is open (the pinned one, or a fresh one stored as a hash),
 * or undefined when setup is closed. Each instance adds its own token, so every printed link works.
 */
export async function prepareSetupToken(deps: Deps): Promise<string | undefined> {
  if (!(await setupOpen(deps))) return undefined;
  if (deps.config.setupToken) return deps.config.setupToken;
  const token = randomToken(deps.random, 32);
  const now = deps.clock.now();
  await deps.db
    .deleteFrom('setup_tokens')
    .where('created_at', '<=', now - SETUP_TOKEN_TTL_MS)
    .execute();
  await deps.db
    .insertInto('setup_tokens')
    .values({ token_hash: sha256(token), created_at: now })
    .execute();
  return token;
}

/** Whether a presented setup token is valid (constant-time against a pinned token). */
export async function setupTokenValid(deps: Deps, token: string): Promise<boolean> {
  if (token.length === 0 || token.length > 512) return false;
  if (deps.config.setupToken) return safeEqual(token, deps.config.setupToken);
  const row = await deps.db
    .selectFrom('setup_tokens')
    .select('created_at')
    .where('token_hash', '=', sha256(token))
    .executeTakeFirst();
  return row !== undefined && row.created_at > deps.clock.now() - SETUP_TOKEN_TTL_MS;
}

export type SetupResult = { ok: true; accountId: string } | { ok: false; reason: 'closed' | 'bad-token' };

/** Creates the first account at role admin. Racing calls create exactly one: a singleton row guards it. */
export async function completeSetup(
  deps: Deps,
  input: { token: string; username: string; password: string },
): Promise<SetupResult> {
  if (!(await setupOpen(deps))) return { ok: false, reason: 'closed' };
  if (!(await setupTokenValid(deps, input.token))) {
    // Completing setup spends generated tokens, so a racing call may see its token vanish: report that as closed.
    return { ok: false, reason: (await setupOpen(deps)) ? 'bad-token' : 'closed' };
  }
  const passwordHash = await hashPassword(input.password);
  const id = newId(deps.random);
  const now = deps.clock.now();
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('meta')
        .values({ key: 'setup_completed', value: String(now) })
        .execute();
      await insertAccount(trx, {
        id,
        username: input.username,
        password_hash: passwordHash,
        role: 'admin',
        created_at: now,
      });
      await trx.deleteFrom('setup_tokens').execute();
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'closed' };
    throw err;
  }
  return { ok: true, accountId: id };
}

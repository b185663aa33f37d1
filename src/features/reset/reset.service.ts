// Password reset links: minted by an administrator (or the host CLI) for another account, shown once, never logged,
// stored only as the token's SHA-256; one live link per account, valid 24 hours, spent by its first use.
import type { Deps } from '../../deps.ts';
import { randomToken, sha256 } from '../../deps.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import { findAccountById, replacePasswordHash } from '../auth/accounts.repo.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { Actor } from '../auth/reauth-window.ts';
import { actorRecentlyConfirmed } from '../tokens/actor-confirmed.ts';
import { actorIsAdmin } from '../auth/admin-actor.ts';
import { endAccountSessions } from '../auth/sessions.service.ts';
import { revokeAccountTokens } from '../tokens/tokens.service.ts';
import { findResetByTokenHash, spendReset, upsertReset } from './reset.repo.ts';

/** A link works this long after minting. */
export const RESET_TTL_MS = 24 * 60 * 60 * 1000;
/** 256 bits of entropy, base64url-encoded to 43 characters. */
const TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A freshly minted link: the URL exists only in this value (never stored, never logged). */
export interface MintedResetLink {
  url: string;
  expiresAt: number;
  username: string;
  /** Whether the account is suspended now (the link works only once it is reactivated). */
  suspended: boolean;
}

export type MintResetResult =
  | ({ ok: true } & MintedResetLink)
  | { ok: false; reason: 'self' | 'not-found' | 'reauth-required' | 'not-admin' };

/**
 * Mints a reset link for another account on `base` (the external origin), voiding the account's previous link.
 * `actorId` null is the host CLI; a signed-in actor mints only from its session `sessionIdHash` confirmed within the
 * last 10 minutes ("Confirm it's you"; a link takes the account over) or through its own writing API token (see
 * actorRecentlyConfirmed), else 'reauth-required' and nothing changes. Only an administrator mints one ('not-admin').
 * The event is logged without the link.
 */
export async function mintResetLink(
  deps: Deps,
  input: Actor & { accountId: string; base: string },
): Promise<MintResetResult> {
  if (input.actorId === input.accountId) return { ok: false, reason: 'self' };
  if (!(await actorRecentlyConfirmed(deps, input))) return { ok: false, reason: 'reauth-required' };
  if (!(await actorIsAdmin(deps, input))) return { ok: false, reason: 'not-admin' };
  const account = await findAccountById(deps.db, input.accountId);
  if (!account) return { ok: false, reason: 'not-found' };
  const token = randomToken(deps.random, TOKEN_BYTES);
  const now = deps.clock.now();
  const expiresAt = now + RESET_TTL_MS;
  try {
    await upsertReset(deps.db, {
      account_id: account.id,
      token_hash: sha256(token),
      created_at: now,
      expires_at: expiresAt,
    });
  } catch (err) {
    // Removed between the read and the write: the foreign key refused the row.
    if (isForeignKeyViolation(err)) return { ok: false, reason: 'not-found' };
    throw err;
  }
  deps.log.info(
    { event: 'reset-link-created', account: account.id, actor: input.actorId ?? 'cli', expiresAt },
    'password reset link created',
  );
  return {
    ok: true,
    url: `${input.base}/reset?token=${token}`,
    expiresAt,
    username: account.username,
    suspended: account.suspended_at !== null,
  };
}

export type OpenResetResult = { ok: true; username: string } | { ok: false; reason: 'invalid' | 'suspended' };

/** Looks up a presented token: missing, unknown, spent, replaced and expired are all simply 'invalid'. */
export async function openResetLink(deps: Deps, token: string): Promise<OpenResetResult> {
  if (!TOKEN_SHAPE.test(token)) return { ok: false, reason: 'invalid' };
  const row = await findResetByTokenHash(deps.db, sha256(token));
  if (!row || deps.clock.now() >= row.expires_at) return { ok: false, reason: 'invalid' };
  if (row.suspended_at !== null) return { ok: false, reason: 'suspended' };
  return { ok: true, username: row.username };
}

/**
 * Sets the account's new password through the link and spends it, in one transaction: the spend is a conditional
 * delete (unexpired, account active), so of two racing uses one succeeds. The credentials version moves on, every
 * session ends and every API token of the account is revoked (a reset is recovery: whoever had the old password may
 * have minted one); the second factor stays, so the next sign-in still owes its code.
 */
export async function useResetLink(deps: Deps, input: { token: string; password: string }): Promise<OpenResetResult> {
  // Checked before hashing so a dead link costs no argon2 work; the transaction decides.
  const opened = await openResetLink(deps, input.token);
  if (!opened.ok) return opened;
  const passwordHash = await hashPassword(input.password);
  const spent = await deps.db.transaction().execute(async (trx) => {
    const accountId = await spendReset(trx, sha256(input.token), deps.clock.now());
    if (!accountId) return false;
    await replacePasswordHash(trx, accountId, passwordHash);
    await endAccountSessions(trx, accountId);
    await revokeAccountTokens(trx, accountId);
    return true;
  });
  if (spent) return opened;
  // Lost a race (spent, replaced, expired or suspended meanwhile): say which of the two pages applies.
  const now = await openResetLink(deps, input.token);
  return now.ok ? { ok: false, reason: 'invalid' } : now;
}

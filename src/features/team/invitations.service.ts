// Invitations: minted by an admin for a role only, accepted once within 7 days, stored only as a token hash.
import type { Deps } from '../../deps.ts';
import { newId, randomToken, sha256 } from '../../deps.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { findAccountBySkeleton, findAccountByUsername, insertAccount } from '../auth/accounts.repo.ts';
import { usernameSkeleton } from '../auth/lookalike.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { Actor } from '../auth/reauth-window.ts';
import { actorRecentlyConfirmed } from '../tokens/actor-confirmed.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import {
  findInvitationByTokenHash,
  findInvitationState,
  insertInvitation,
  revokeInvitation as revokeRow,
  spendInvitation,
  type Role,
} from './team.repo.ts';
import { hasInvisibleCharacters } from '../text-rules.ts';

/** An invitation is valid this long after minting. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Bytes of entropy in a token: 256 bits, base64url-encoded to 43 characters. */
const TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Longest invitation note, in code points. */
export const INVITATION_NOTE_MAX = 200;

/** A freshly minted invitation: the join link exists only here and in the log line. */
export interface MintedInvitation {
  id: string;
  role: Role;
  /** As stored: trimmed, null when none was given. */
  note: string | null;
  joinLink: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * The note as stored (trimmed; empty is no note), or the reason it is refused: at most 200 code points, no control or
 * invisible characters. Every door checks it with this before minting.
 */
export function checkInvitationNote(
  raw: string | undefined,
): { ok: true; note: string | null } | { ok: false; message: string } {
  const note = (raw ?? '').trim();
  if (hasInvisibleCharacters(note))
    return { ok: false, message: 'A note cannot contain control or invisible characters.' };
  if ([...note].length > INVITATION_NOTE_MAX)
    return { ok: false, message: `A note is at most ${INVITATION_NOTE_MAX} characters.` };
  return { ok: true, note: note === '' ? null : note };
}

export type MintInvitationResult =
  | ({ ok: true } & MintedInvitation)
  | { ok: false; reason: 'reauth-required' | 'not-admin' };

/**
 * Mints an invitation for `role`, authored by `actorId` (null: from the host command line), with an optional note
 * that only labels it in the admin's list; logs the join link built on `base` (the external origin). An admin
 * invitation hands out full control, so a signed-in actor mints one only from its session `sessionIdHash` confirmed
 * within the last 10 minutes ("Confirm it's you") or through its own writing API token (see actorRecentlyConfirmed);
 * else 'reauth-required' and nothing is minted. A viewer invitation (reading only) and the command line need none.
 * Only an administrator mints ('not-admin'). A note that checkInvitationNote() refuses is a caller's error (thrown).
 */
export async function mintInvitation(
  deps: Deps,
  input: Actor & { role: Role; note?: string; base: string },
): Promise<MintInvitationResult> {
  const checked = checkInvitationNote(input.note);
  if (!checked.ok) throw new RangeError(checked.message);
  if (input.role === 'admin' && !(await actorRecentlyConfirmed(deps, input)))
    return { ok: false, reason: 'reauth-required' };
  if (!(await actorIsAdmin(deps, input))) return { ok: false, reason: 'not-admin' };
  const token = randomToken(deps.random, TOKEN_BYTES);
  const now = deps.clock.now();
  const id = newId(deps.random);
  const expiresAt = now + INVITATION_TTL_MS;
  await insertInvitation(deps.db, {
    id,
    token_hash: sha256(token),
    role: input.role,
    created_at: now,
    expires_at: expiresAt,
    created_by: input.actorId,
    note: checked.note,
  });
  const joinLink = `${input.base}/invite?token=${token}`;
  // The join link is also written to the web service's log, for operators without the page at hand.
  deps.log.info(
    { event: 'invitation-created', invitation: id, role: input.role, expiresAt, joinLink },
    `invitation created: ${joinLink}`,
  );
  return { ok: true, id, role: input.role, note: checked.note, joinLink, createdAt: now, expiresAt };
}

export type OpenResult = { ok: true; role: Role; expiresAt: number } | { ok: false; reason: 'invalid' };

/** Looks up a presented token; missing, unknown, spent, revoked or expired tokens are all simply invalid. */
export async function openInvitation(deps: Deps, token: string): Promise<OpenResult> {
  if (!TOKEN_SHAPE.test(token)) return { ok: false, reason: 'invalid' };
  const row = await findInvitationByTokenHash(deps.db, sha256(token));
  if (!row || row.spent_at !== null || row.revoked_at !== null || deps.clock.now() >= row.expires_at) {
    return { ok: false, reason: 'invalid' };
  }
  return { ok: true, role: row.role, expiresAt: row.expires_at };
}

export type AcceptResult =
  | { ok: true; accountId: string; role: Role }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'username-taken' }
  | { ok: false; reason: 'username-lookalike' };

/**
 * Creates the account at the invitation's role and spends the token, in one transaction: the spend is a
 * conditional update, so racing acceptances create exactly one account; a taken username, or one whose confusable
 * skeleton matches an existing account's (unique indexes), rolls the spend back.
 */
export async function acceptInvitation(
  deps: Deps,
  input: { token: string; username: string; password: string },
): Promise<AcceptResult> {
  // Checked before hashing so an invalid token costs no argon2 work; the transaction re-checks.
  if (!(await openInvitation(deps, input.token)).ok) return { ok: false, reason: 'invalid' };
  const passwordHash = await hashPassword(input.password);
  const accountId = newId(deps.random);
  try {
    return await deps.db.transaction().execute(async (trx): Promise<AcceptResult> => {
      const now = deps.clock.now();
      const row = await findInvitationByTokenHash(trx, sha256(input.token));
      if (!row || !(await spendInvitation(trx, row.id, now))) return { ok: false, reason: 'invalid' };
      await insertAccount(trx, {
        id: accountId,
        username: input.username,
        password_hash: passwordHash,
        role: row.role,
        created_at: now,
      });
      return { ok: true, accountId, role: row.role };
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Which index refused it, read after the rollback: the same name (ignoring case) or only a look-alike of another.
    const same = await findAccountByUsername(deps.db, input.username);
    return { ok: false, reason: same ? 'username-taken' : 'username-lookalike' };
  }
}

/**
 * What acceptance would say of `username` now, read without writing: taken (the same name, ignoring case), a look-alike
 * of an existing account's, or free (undefined). The join form uses it to name every problem at once; acceptance itself
 * still relies on the unique indexes.
 */
export async function usernameClash(
  deps: Deps,
  username: string,
): Promise<'username-taken' | 'username-lookalike' | undefined> {
  if (username.trim() === '') return undefined;
  if (await findAccountByUsername(deps.db, username)) return 'username-taken';
  return (await findAccountBySkeleton(deps.db, usernameSkeleton(username))) ? 'username-lookalike' : undefined;
}

/**
 * Revoked (`changed` false when it already was, or is not there), or refused: an accepted one, or a non-admin actor.
 */
export type RevokeInvitationResult = { ok: true; changed: boolean } | { ok: false; reason: 'spent' | 'not-admin' };

/**
 * Revokes an open invitation (pending or expired); a revoked or unknown one is left as it is (idempotent). A spent
 * one is refused: it cannot be un-spent, its account exists.
 */
export async function revokeInvitation(deps: Deps, actor: AdminActor, id: string): Promise<RevokeInvitationResult> {
  if (!(await actorIsAdmin(deps, actor))) return { ok: false, reason: 'not-admin' };
  if (await revokeRow(deps.db, id, deps.clock.now())) return { ok: true, changed: true };
  const row = await findInvitationState(deps.db, id);
  return row !== undefined && row.spent_at !== null ? { ok: false, reason: 'spent' } : { ok: true, changed: false };
}

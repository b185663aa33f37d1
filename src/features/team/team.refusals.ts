// The team acts' refusals: one catalogue per act, from each reason of its service to the words every door shows (the
// account page, the JSON API's `detail`, `svc accounts`) and what the HTTP doors answer with. A reason added to a
// service without words here does not compile.
import { CONFIRM_FIRST } from '../auth/reauth-window.ts';
import { NOT_ADMIN, type Refusal } from '../refusals.ts';
import type { MintInvitationResult, RevokeInvitationResult } from './invitations.service.ts';
import type { ReassignResult, RevokeTokensResult, SignOutResult } from './accounts-lifecycle.service.ts';
import type { ReactivateResult, ReenrolResult, RemoveResult, RoleResult, SuspendResult } from './team.service.ts';
import type { MintResetResult } from '../reset/reset.service.ts';

/** What a team refusal's words may name: the account acted on, and the credential the actor used. */
export interface TeamFacts {
  username: string;
  via: 'session' | 'token' | 'cli';
}

type ReasonOf<R> = Extract<R, { ok: false }> extends { reason: infer K } ? K & string : never;
type Catalogue<R> = Record<ReasonOf<R>, Refusal<TeamFacts>>;

const NOT_FOUND = { words: 'That account no longer exists.', status: 404, type: 'not-found' } as const;
const PROMOTE_FIRST = 'Promote another account first.';
const LAST_ADMIN = {
  words: `That is the last active administrator. ${PROMOTE_FIRST}`,
  status: 409,
  type: 'last-admin',
} as const;

/** An act that needs "Confirm it's you" (a session) or a writing token of an active account (the API). */
const confirmationRequired = (act: string, nothingDone: string): Refusal<TeamFacts> => ({
  words: ({ via }) =>
    via === 'token'
      ? `${act} needs a token that is not read-only, of an active account.`
      : `${CONFIRM_FIRST} ${nothingDone}`,
  status: 403,
  type: 'confirmation-required',
});

export const ROLE_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: { words: 'You cannot change your own role. Another administrator can.', status: 409, type: 'own-role' },
  'last-admin': {
    words: `That would leave no active administrator. ${PROMOTE_FIRST}`,
    status: 409,
    type: 'last-admin',
  },
  'reauth-required': confirmationRequired('Making an account an administrator', 'The role was not changed.'),
} satisfies Catalogue<RoleResult>;

export const REENROL_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: {
    words: 'You cannot reset your own second factor. Another administrator can.',
    status: 409,
    type: 'own-account',
  },
} satisfies Catalogue<ReenrolResult>;

export const SUSPEND_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: { words: 'You cannot suspend your own account.', status: 409, type: 'own-account' },
  'last-admin': LAST_ADMIN,
} satisfies Catalogue<SuspendResult>;

export const REACTIVATE_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
} satisfies Catalogue<ReactivateResult>;

export const SIGN_OUT_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: {
    words:
      'To end your own sessions, use the Sessions section of your Profile: signing yourself out everywhere would end this session too.',
    status: 409,
    type: 'own-account',
  },
} satisfies Catalogue<SignOutResult>;

export const REVOKE_TOKENS_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: {
    words: 'Revoke your own API tokens one by one in the API tokens section of your Profile.',
    status: 409,
    type: 'own-account',
  },
} satisfies Catalogue<RevokeTokensResult>;

export const RESET_LINK_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: {
    words: 'You cannot create a reset link for your own account. Change your password on your Profile.',
    status: 409,
    type: 'own-account',
  },
  'reauth-required': confirmationRequired('A reset link', 'Nothing was created.'),
} satisfies Catalogue<MintResetResult>;

export const REASSIGN_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  same: { words: 'Choose another account to receive the records.', status: 400, field: 'to' },
  'heir-not-found': {
    words: 'The account chosen to receive the records no longer exists. Choose another.',
    status: 409,
    field: 'to',
  },
  'heir-suspended': {
    words: 'The account chosen to receive the records is suspended. Choose an active account.',
    status: 409,
    type: 'heir-suspended',
  },
} satisfies Catalogue<ReassignResult>;

export const REMOVE_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': NOT_FOUND,
  self: { words: 'You cannot remove your own account.', status: 409, type: 'own-account' },
  'last-admin': LAST_ADMIN,
  confirmation: {
    words: 'The confirmation did not match the username exactly, so nothing was removed.',
    status: 400,
    field: 'confirm',
  },
  author: {
    words: ({ username }) =>
      `${username || 'This account'} authored records in this service (such as invitations), so the database keeps it. ` +
      'Reassign those records to another account, or keep the account and demote it to viewer to retire it.',
    status: 409,
    type: 'has-authored-records',
  },
} satisfies Catalogue<RemoveResult>;

export const MINT_INVITATION_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'reauth-required': confirmationRequired('An admin invitation', 'Nothing was created.'),
} satisfies Catalogue<MintInvitationResult>;

export const REVOKE_INVITATION_REFUSALS = {
  'not-admin': NOT_ADMIN,
  spent: {
    words:
      'That invitation was already accepted, so it cannot be revoked: its account exists. Suspend or remove that account instead.',
    status: 409,
    type: 'invitation-spent',
  },
} satisfies Catalogue<RevokeInvitationResult>;

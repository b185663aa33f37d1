// The accounts API's contract: each operation's request and answer schemas, as apiRoute() definitions the routes file
// registers its handlers on (so the OpenAPI document and the validation come from the same schemas).
import { z } from '@hono/zod-openapi';
import { AnyIdParam, apiRoute, IdParam, jsonAnswer, jsonBody, pageOf, PageQuery, Timestamp } from '../../http/api.ts';
import { ID_PATTERN } from '../../http/text.ts';
import { AccountChangeSchema, AccountDetailSchema, AccountSchema } from './team.api.schema.ts';
import {
  REACTIVATE_REFUSALS,
  REASSIGN_REFUSALS,
  REENROL_REFUSALS,
  RESET_LINK_REFUSALS,
  REVOKE_TOKENS_REFUSALS,
  ROLE_REFUSALS,
  SIGN_OUT_REFUSALS,
  SUSPEND_REFUSALS,
} from './team.refusals.ts';

/** Said of an id in the path of a read, or of `to`, that names no account. */
export const NO_ACCOUNT = 'No account has this id.';

/** An act's 404 as documented: the words its catalogue answers with when the account is gone. */
const gone = (catalogue: { 'not-found': { words: string } }) => catalogue['not-found'].words;

const tags = ['Accounts'];
const ListQuery = PageQuery.extend({
  role: z.enum(['admin', 'viewer']).optional(),
  state: z.enum(['active', 'suspended']).optional(),
});
const RoleBody = z.strictObject({ role: z.enum(['admin', 'viewer']) });
const ReassignBody = z.strictObject({
  to: z
    .string()
    .regex(ID_PATTERN, NO_ACCOUNT)
    .openapi({ description: 'The id of the active account that receives the records.' }),
});
const RemoveQuery = z.object({
  confirm: z
    .string({ error: 'Type the account’s exact username to confirm.' })
    .max(256)
    .openapi({ description: 'The account’s exact username.' }),
});
const ReassignedSchema = z
  .strictObject({ moved: z.number().int(), to: z.strictObject({ id: z.string(), username: z.string() }) })
  .openapi('Reassigned');
const ResetLinkSchema = z
  .strictObject({
    reset_link: z.string().openapi({ description: 'Shown in this answer only: never stored, logged or shown again.' }),
    expires_at: Timestamp,
    account_suspended: z.boolean().openapi({ description: 'The link works only once the account is reactivated.' }),
  })
  .openapi('ResetLink');

const list = apiRoute({
  method: 'get',
  path: '/api/accounts',
  tags,
  summary: 'List accounts',
  description: 'Every account, oldest first, cursor-paged; filter by `role` and `state`.',
  request: { query: ListQuery },
  responses: { 200: jsonAnswer(pageOf(AccountSchema), 'A page of accounts.') },
});

const one = apiRoute({
  method: 'get',
  path: '/api/accounts/{id}',
  tags,
  summary: 'One account',
  description: 'The facts of the account’s console page.',
  request: { params: IdParam },
  refusals: { 404: NO_ACCOUNT },
  responses: { 200: jsonAnswer(AccountDetailSchema, 'The account.') },
});

const setRole = apiRoute({
  method: 'patch',
  path: '/api/accounts/{id}',
  tags,
  summary: 'Change an account’s role',
  description:
    'Applies from that account’s next request. Never your own role, and never leaving no active administrator. Making an account an admin hands out every power of the service: like an admin invitation, it needs a writing token of an active account.',
  request: { params: IdParam, body: jsonBody(RoleBody) },
  refusals: {
    403: '`confirmation-required`: making an admin with a token that cannot prove it (see the description).',
    404: gone(ROLE_REFUSALS),
    409: '`own-role`: your own role; `last-admin`: it would leave no active administrator.',
  },
  responses: { 200: jsonAnswer(AccountChangeSchema, 'The account; `changed` is false when it already had the role.') },
});

/** An act posted to /api/accounts/{id}/<path> without a body. */
function act<S extends z.ZodType>(
  path: string,
  doc: {
    summary: string;
    description: string;
    /** The act's refusal catalogue, whose words for a gone account the 404 documents. */
    refusals: { 'not-found': { words: string } };
    conflict?: string;
    answer: S;
    answered: string;
  },
) {
  return apiRoute({
    method: 'post',
    path: `/api/accounts/{id}/${path}`,
    tags,
    summary: doc.summary,
    description: doc.description,
    request: { params: IdParam },
    refusals: { 404: gone(doc.refusals), ...(doc.conflict ? { 409: doc.conflict } : {}) },
    responses: { 200: jsonAnswer(doc.answer, doc.answered) },
  });
}

const suspend = act('suspend', {
  refusals: SUSPEND_REFUSALS,
  summary: 'Suspend an account',
  description:
    'Its sessions end; it cannot sign in and its API tokens answer 401 until it is reactivated (they are kept).',
  conflict: '`own-account`: your own account; `last-admin`: the last active administrator.',
  answer: AccountChangeSchema,
  answered: 'The account; `changed` is false when it was already suspended.',
});

const reactivate = act('reactivate', {
  refusals: REACTIVATE_REFUSALS,
  summary: 'Reactivate an account',
  description: 'It may sign in again, and its unrevoked, unexpired API tokens work again.',
  answer: AccountChangeSchema,
  answered: 'The account; `changed` is false when it was already active.',
});

const SignOutBody = z
  .strictObject({
    revoke_tokens: z.boolean().optional().openapi({
      description:
        'Also revoke every API token of the account, in the same transaction (each answers 401 from the next request on). Absent or false: its tokens keep working.',
      example: true,
    }),
  })
  .openapi('SignOut');

const signOut = apiRoute({
  method: 'post',
  path: '/api/accounts/{id}/sign-out-everywhere',
  tags,
  summary: 'Sign an account out everywhere',
  description:
    'Ends every session of the account, pending sign-ins included. Its API tokens keep working unless the optional body asks `{"revoke_tokens": true}`: then every one is revoked in the same transaction, as the account page’s checkbox does. No body, or `{}`, ends the sessions only.',
  request: { params: IdParam, body: { ...jsonBody(SignOutBody), required: false } },
  refusals: { 404: gone(SIGN_OUT_REFUSALS), 409: '`own-account`: end your own sessions on your Profile.' },
  responses: {
    200: jsonAnswer(
      z
        .strictObject({
          sessions_ended: z.number().int(),
          tokens_revoked: z
            .number()
            .int()
            .openapi({ description: 'How many API tokens were revoked: 0 unless asked.' }),
        })
        .openapi('SignedOut'),
      'How many sessions ended, and how many API tokens were revoked.',
    ),
  },
});

const revokeTokens = act('revoke-tokens', {
  refusals: REVOKE_TOKENS_REFUSALS,
  summary: 'Revoke every API token of an account',
  description:
    'Deletes every personal API token of the account: each answers 401 from the next request on, on every instance, and reactivating the account does not bring them back. Its sessions are untouched. Never your own tokens (revoke those one by one).',
  conflict: '`own-account`: revoke your own tokens one by one (DELETE /api/tokens/{id}).',
  answer: z.strictObject({ tokens_revoked: z.number().int() }).openapi('TokensRevoked'),
  answered: 'How many tokens were revoked (0 when it had none).',
});

const resetSecondFactor = act('reset-second-factor', {
  refusals: REENROL_REFUSALS,
  summary: 'Reset an account’s second factor',
  description:
    'Clears every second factor of the account — its TOTP secret and every passkey — and voids its recovery codes, in one step; it enrols again at its next sign-in. Its password and sessions are untouched.',
  conflict: '`own-account`: another administrator resets yours.',
  answer: AccountSchema,
  answered: 'The account, without a second factor (`second_factors` is empty).',
});

const resetLink = apiRoute({
  method: 'post',
  path: '/api/accounts/{id}/reset-link',
  tags,
  summary: 'Create a password reset link',
  description:
    'A single-use link, valid 24 hours, in this answer only (never stored, logged or shown again); any earlier link of the account stops working. ' +
    'Whoever opens it sets a new password; every session of the account then ends and every API token of it is revoked.',
  request: { params: IdParam },
  refusals: { 404: gone(RESET_LINK_REFUSALS), 409: '`own-account`: change your own password on your Profile.' },
  responses: { 201: jsonAnswer(ResetLinkSchema, 'The link, this once.') },
});

const reassign = apiRoute({
  method: 'post',
  path: '/api/accounts/{id}/reassign',
  tags,
  summary: 'Move an account’s authored records',
  description:
    'Every row it authored (invitations, channels, SSO providers) passes to `to`, an active account; afterwards it can be removed.',
  request: { params: IdParam, body: jsonBody(ReassignBody) },
  refusals: { 404: gone(REASSIGN_REFUSALS), 409: '`heir-suspended`: the receiving account is suspended.' },
  responses: { 200: jsonAnswer(ReassignedSchema, 'How many rows moved, and to whom.') },
});

const remove = apiRoute({
  method: 'delete',
  path: '/api/accounts/{id}',
  tags,
  summary: 'Remove an account',
  description:
    'Needs `confirm` equal to its exact username. Its sessions and API tokens go with it. Idempotent: an account that is not there answers 204.',
  request: { params: AnyIdParam, query: RemoveQuery },
  refusals: {
    409: '`own-account`, `last-admin`, or `has-authored-records`: reassign its records first, or demote it to viewer to retire it.',
  },
  responses: { 204: { description: 'Removed, or there was no such account.' } },
});

/** Every accounts operation, by name. */
export const accountOperations = {
  list,
  one,
  setRole,
  suspend,
  reactivate,
  signOut,
  revokeTokens,
  resetSecondFactor,
  resetLink,
  reassign,
  remove,
};

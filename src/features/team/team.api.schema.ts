// The shapes the team's JSON API answers with (accounts, invitations), how rows become them, and the keyset cursor
// both lists page by. Never a token, a hash, a link already shown, or a second-factor secret.
import { z } from '@hono/zod-openapi';
import { iso, Timestamp } from '../../http/api.ts';
import type { AccountDetail } from './accounts-lifecycle.service.ts';
import { factorKinds, hasSecondFactor } from '../second-factor/factors.ts';
import { SecondFactors } from '../tokens/factor-kinds.api.schema.ts';
import type { OpenInvitationRow, TeamAccount } from './team.repo.ts';

const Role = z.enum(['admin', 'viewer']);

/**
 * The fields of an account in both of its shapes (spread, not extended: an extended strict object is no longer strict).
 */
const accountFields = {
  id: z.string(),
  username: z.string(),
  role: Role,
  state: z
    .enum(['active', 'suspended'])
    .openapi({ description: 'A suspended account cannot sign in and its API tokens answer 401.' }),
  suspended_at: Timestamp.nullable(),
  second_factor_enabled: z
    .boolean()
    .openapi({ description: 'Whether it has any second factor (TOTP or a passkey); `second_factors` says which.' }),
  second_factors: SecondFactors,
  created_at: Timestamp,
  last_sign_in_at: Timestamp.nullable(),
};

/** An account as the team list shows it. */
export const AccountSchema = z.strictObject(accountFields).openapi('Account');

/** One account with the facts of its console page. */
export const AccountDetailSchema = z
  .strictObject({
    ...accountFields,
    authored_records: z.number().int().openapi({
      description: 'Rows it authored (invitations, channels, SSO providers); while any remain it cannot be removed.',
    }),
    live_invitations: z.number().int().openapi({
      description: 'Invitations it created that can still be accepted (suspending it does not void them).',
    }),
    sessions: z.number().int().openapi({ description: 'Live sessions, pending sign-ins included.' }),
    api_tokens: z.number().int().openapi({ description: 'Unexpired personal API tokens.' }),
    linked_identities: z.number().int().openapi({ description: 'Single sign-on identities linked to it.' }),
    reset_link_expires_at: Timestamp.nullable().openapi({
      description: 'When its unused password reset link stops working; null when it has none.',
    }),
  })
  .openapi('AccountDetail');

/** The answer of an act that may find the account already in the state asked for. */
export const AccountChangeSchema = z
  .strictObject({
    changed: z
      .boolean()
      .openapi({ description: 'False when the account was already in that state (nothing was done).' }),
    account: AccountSchema,
  })
  .openapi('AccountChange');

/** An open invitation as the list shows it: never its token, hash or join link. */
export const InvitationSchema = z
  .strictObject({
    id: z.string(),
    role: Role,
    note: z.string().nullable(),
    state: z.enum(['pending', 'expired']),
    created_at: Timestamp,
    expires_at: Timestamp,
    created_by: z
      .strictObject({ id: z.string(), username: z.string() })
      .nullable()
      .openapi({ description: 'The account that created it; null when it was created from the host command line.' }),
  })
  .openapi('Invitation');

/** An account row in the API's words. */
export function toAccount(a: TeamAccount): z.infer<typeof AccountSchema> {
  return {
    id: a.id,
    username: a.username,
    role: a.role,
    state: a.suspended_at === null ? 'active' : 'suspended',
    suspended_at: iso(a.suspended_at),
    second_factor_enabled: hasSecondFactor(a.factors),
    second_factors: factorKinds(a.factors),
    created_at: iso(a.created_at),
    last_sign_in_at: iso(a.last_sign_in_at),
  };
}

/** The account page's facts in the API's words. */
export function toAccountDetail(d: AccountDetail): z.infer<typeof AccountDetailSchema> {
  return {
    ...toAccount(d.account),
    authored_records: d.authored,
    live_invitations: d.liveInvitations,
    sessions: d.sessions,
    api_tokens: d.tokens,
    linked_identities: d.identities,
    reset_link_expires_at: iso(d.resetLinkExpiresAt ?? null),
  };
}

/** An open invitation in the API's words. */
export function toInvitation(
  i: OpenInvitationRow & { state: 'pending' | 'expired' },
): z.infer<typeof InvitationSchema> {
  return {
    id: i.id,
    role: i.role,
    note: i.note,
    state: i.state,
    created_at: iso(i.created_at),
    expires_at: iso(i.expires_at),
    created_by: i.created_by === null ? null : { id: i.created_by, username: i.created_by_username ?? '' },
  };
}

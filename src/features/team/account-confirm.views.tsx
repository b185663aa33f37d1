// The confirmation step of the account page's destructive acts: what each one does, its button, and a way back (a
// second page state, `?confirm=<act>`; no script).
import type { Child } from 'hono/jsx';
import { Checkbox, Form } from '../../http/views/components.tsx';
import type { AccountDetail } from './accounts-lifecycle.service.ts';

/** The acts that ask for confirmation first, by the `confirm` query value that shows their step. */
export const CONFIRMABLE = ['suspend', 'sign-out', 'revoke-tokens', 'reenroll', 'reassign'] as const;
export type Confirmable = (typeof CONFIRMABLE)[number];

/** "1 record", "3 records". */
export function records(n: number): string {
  return n === 1 ? '1 record' : `${n} records`;
}

/** What a second-factor reset takes away: "the authenticator (TOTP) and the 2 passkeys", "the passkey"… */
function clearedBy(detail: AccountDetail): string {
  const { totp, passkeys } = detail.account.factors;
  const keys = passkeys === 0 ? '' : passkeys === 1 ? 'the passkey' : `the ${passkeys} passkeys`;
  return [totp ? 'the authenticator (TOTP)' : '', keys].filter((w) => w !== '').join(' and ') || 'any second factor';
}

/** What each confirmation says, and its button. */
function confirmText(
  act: Confirmable,
  username: string,
  detail: AccountDetail,
  heir?: string,
): { title: string; text: Child; button: string } {
  switch (act) {
    case 'suspend':
      return {
        title: `Suspend ${username}?`,
        text: (
          <>
            {`${username} will not be able to sign in (password or single sign-on), and its API tokens stop working until it is reactivated. Its sessions and any half-finished sign-in end now. Nothing is deleted: tokens, second factor and records stay.`}
            {detail.liveInvitations > 0 ? (
              <>
                {` ${detail.liveInvitations === 1 ? 'The 1 invitation' : `The ${detail.liveInvitations} invitations`} that ${username} created and nobody has accepted yet stay valid: revoke them on the `}
                <a href="/settings?tab=team">Team tab</a>
                {' if they should not be used.'}
              </>
            ) : null}
          </>
        ),
        button: `Suspend ${username}`,
      };
    case 'sign-out':
      return {
        title: `Sign ${username} out everywhere?`,
        text: `Every session of ${username} ends now, half-finished sign-ins included; it signs in again as usual.${detail.tokenList.length > 0 ? ' Its API tokens keep working unless you tick the box below.' : ''}`,
        button: `Sign ${username} out everywhere`,
      };
    case 'revoke-tokens':
      return {
        title: `Revoke every API token of ${username}?`,
        text: `${detail.tokenList.length === 1 ? `The one API token of ${username} stops` : `All ${detail.tokenList.length} API tokens of ${username} stop`} working now and for good: every request with one answers 401, and reactivating the account does not bring them back. Integrations that use them need new tokens, which ${username} mints on its Profile. Its sessions are untouched.`,
        button: 'Revoke all API tokens',
      };
    case 'reenroll':
      return {
        title: `Reset the second factor of ${username}?`,
        text: `This removes ${clearedBy(detail)} of ${username} and voids its recovery codes; it enrols again at its next sign-in. Its password and sessions are unchanged.`,
        button: 'Reset second factor',
      };
    case 'reassign':
      return {
        title: `Move the records of ${username} to ${heir}?`,
        text: `${detail.authored === 1 ? 'The 1 record' : `All ${detail.authored} records`} that ${username} authored (invitations, channels, single sign-on providers) will name ${heir} as their author instead, in one step. Afterwards ${username} can be removed.`,
        button: `Move records to ${heir}`,
      };
  }
}

/** The second step of a destructive act: what it does, its button, and a way back. */
export function ConfirmStep(props: {
  act: Confirmable;
  heir?: { id: string; username: string };
  detail: AccountDetail;
}) {
  const a = props.detail.account;
  const { title, text, button } = confirmText(props.act, a.username, props.detail, props.heir?.username);
  return (
    <section class="confirm" id="confirm" aria-labelledby="confirm-title">
      <h3 id="confirm-title">{title}</h3>
      <p>{text}</p>
      <Form
        action={`/settings/accounts/${props.act}`}
        class="actions"
        id={props.act === 'sign-out' ? 'account-sign-out' : undefined}
      >
        <input type="hidden" name="account" value={a.id} />
        {props.heir ? <input type="hidden" name="to" value={props.heir.id} /> : null}
        {props.act === 'sign-out' && props.detail.tokenList.length > 0 ? (
          <Checkbox
            name="revoke_tokens"
            label={`Also revoke every API token of ${a.username} (${props.detail.tokenList.length === 1 ? '1 token' : `${props.detail.tokenList.length} tokens`})`}
            hint="For recovery after a stolen password or device: a token minted meanwhile would keep working otherwise."
          />
        ) : null}
        <button type="submit" class={props.act === 'suspend' || props.act === 'revoke-tokens' ? 'danger' : undefined}>
          {button}
        </button>
        <a href={`/settings/accounts/${a.id}`}>Cancel</a>
      </Form>
    </section>
  );
}

// The team tab of /settings: invite, the compact account list (each account's acts are on its own page), and the
// open invitations.
import { OnceField } from '../auth/reveal.tsx';
import { NewAccountFields } from '../auth/new-password-field.tsx';
import { Field, Form, Notice, Select, StackedTable, Time } from '../../http/views/components.tsx';
import { ConfirmStep } from '../second-factor/confirm-step.tsx';
import { describeFactors, hasSecondFactor } from '../second-factor/factors.ts';
import { INVITATION_NOTE_MAX, type MintedInvitation } from './invitations.service.ts';
import type { Team } from './team.service.ts';

/** Fixed notices selected by a query key after a redirect, so no text is ever reflected from the URL. */
export const TEAM_NOTICES: Record<string, string> = {
  removed: 'Account removed. Its sessions and API tokens stopped working.',
  revoked: 'Invitation revoked. Its link no longer works.',
  'not-pending': 'That invitation was already used or revoked.',
  confirmed:
    'Confirmed. For the next 10 minutes you can invite administrators and create password reset links without confirming again.',
};

/** The two roles, as select options. */
export const ROLE_OPTIONS: [string, string][] = [
  ['viewer', 'viewer'],
  ['admin', 'admin'],
];

/** Where an admin's "Confirm it's you" posts (it returns to the team tab, or to the account page it names). */
export const REAUTH_ACTION = '/settings/accounts/reauth';

/** "Confirm it's you" still owed by this session (not confirmed within 10 minutes): its form's kind and errors. */
export interface OwedConfirmation {
  withCode: boolean;
  errors?: Record<string, string>;
  /** On an account page, which act's confirm form the errors belong to (a reset link when absent). */
  at?: 'role' | 'reset-link';
}

/** The invitation form after a refused post: the values sent back and the error of each field. */
export interface InviteFormState {
  values: Record<string, string>;
  errors: Record<string, string>;
}

/**
 * The team tab body. `minted` is the invitation whose join link this page shows, once (the page after the mint's
 * redirect); `mintedGone` says the page was reloaded or revisited after that one showing; `confirm` says an admin
 * invitation needs "Confirm it's you" first.
 */
export function TeamTab(props: {
  team: Team;
  selfId: string;
  notice?: string;
  error?: string;
  minted?: MintedInvitation;
  mintedGone?: boolean;
  invite?: InviteFormState;
  confirm?: OwedConfirmation;
}) {
  const { team } = props;
  return (
    <section>
      <h2>Team</h2>
      {props.notice ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <MintedInvitationNotice minted={props.minted} gone={props.mintedGone} />
      <InviteForm state={props.invite} confirm={props.confirm} />

      <AccountsTable accounts={team.accounts} selfId={props.selfId} />

      <h3>Open invitations</h3>
      {team.invitations.length === 0 ? (
        <p class="empty">No pending or expired invitations.</p>
      ) : (
        <StackedTable
          class="invitations"
          columns={['Role', 'State', 'Created', 'Expires', 'Note', 'Created by', 'Revoke']}
        >
          {team.invitations.map((i) => (
            <tr>
              <td>{i.role}</td>
              <td>
                <span class="badge">{i.state}</span>
              </td>
              <td>
                <span class="cell-label">Created: </span>
                <Time at={i.created_at} />
              </td>
              <td>
                <span class="cell-label">Expires: </span>
                <Time at={i.expires_at} />
              </td>
              <td>
                <span class="cell-label">Note: </span>
                {i.note ?? <span class="empty">—</span>}
              </td>
              <td>
                <span class="cell-label">Created by: </span>
                {i.created_by_username ?? 'command line'}
              </td>
              <td>
                <Form action="/settings/accounts/invitations/revoke">
                  <input type="hidden" name="invitation" value={i.id} />
                  <button type="submit" class="secondary">
                    {i.state === 'pending' ? 'Revoke' : 'Dismiss'}
                  </button>
                </Form>
              </td>
            </tr>
          ))}
        </StackedTable>
      )}
    </section>
  );
}

/** The join link of the invitation just minted (its one showing), or word that it was shown already. */
function MintedInvitationNotice(props: { minted?: MintedInvitation; gone?: boolean }) {
  const { minted } = props;
  if (props.gone) {
    return (
      <div id="invite-result">
        <Notice kind="info">
          This join link was shown once and is not shown again. The invitation is listed under Open invitations; if you
          lost the link, revoke that invitation and create a new one.
        </Notice>
      </div>
    );
  }
  if (!minted) return null;
  return (
    <div id="invite-result">
      <Notice kind="success">
        <p>
          Invitation created for the role <strong>{minted.role}</strong>, valid until <Time at={minted.expiresAt} />.
          Send this join link to the invitee; it is shown only once and works once:
        </p>
        <p>
          <code class="secret" id="join-link">
            {minted.joinLink}
          </code>
        </p>
      </Notice>
    </div>
  );
}

/**
 * The invitation form: the role it grants and an optional note for telling open invitations apart. While `confirm` is
 * owed it offers the viewer role only, and "Confirm it's you" below it unlocks the admin role.
 */
function InviteForm(props: { state?: InviteFormState; confirm?: OwedConfirmation }) {
  const values = props.state?.values ?? {};
  const { confirm } = props;
  return (
    <>
      <h3>Invite someone</h3>
      <Form action="/settings/accounts" id="invite" errors={props.state?.errors}>
        <OnceField />
        <Select
          label="Role"
          name="role"
          options={confirm ? ROLE_OPTIONS.filter(([role]) => role === 'viewer') : ROLE_OPTIONS}
          value={values.role === 'admin' && !confirm ? 'admin' : 'viewer'}
          hint={confirm ? 'To invite an administrator, confirm it’s you below first.' : undefined}
        />
        <Field
          label="Note (optional)"
          name="note"
          value={values.note}
          maxlength={INVITATION_NOTE_MAX}
          autocomplete="off"
          hint="Shown only in the list of open invitations, to tell them apart, such as “for Dana, on-call”. It binds nothing: the invitee still chooses their own username."
        />
        <p class="hint">The invitee chooses their own username and password. The link is valid for 7 days.</p>
        <button type="submit">Create invitation</button>
      </Form>
      {confirm ? (
        <ConfirmStep
          place="invite"
          action={REAUTH_ACTION}
          fields={{}}
          withCode={confirm.withCode}
          why="An administrator can change everything here, so inviting one asks for your password again."
          errors={confirm.errors}
        />
      ) : null}
    </>
  );
}

/** Every account in one compact row; its name links to its page, where all of its acts are. */
function AccountsTable(props: { accounts: Team['accounts']; selfId: string }) {
  return (
    <>
      <h3>Accounts</h3>
      <StackedTable class="accounts" columns={['Username', 'Role', 'State', 'Second factor', 'Last sign-in']}>
        {props.accounts.map((a) => (
          <tr>
            <td>
              <a href={`/settings/accounts/${a.id}`}>{a.username}</a>
              {a.id === props.selfId ? <span class="empty"> (you)</span> : null}
            </td>
            <td>
              <span class={`role role-${a.role}`}>{a.role}</span>
            </td>
            <td>{a.suspended_at === null ? 'active' : <span class="badge state-suspended">suspended</span>}</td>
            <td>
              <span class="cell-label">Second factor: </span>
              {hasSecondFactor(a.factors) ? describeFactors(a.factors) : <span class="empty">None</span>}
            </td>
            <td>
              <span class="cell-label">Last sign-in: </span>
              {a.last_sign_in_at === null ? <span class="empty">never</span> : <Time at={a.last_sign_in_at} />}
            </td>
          </tr>
        ))}
      </StackedTable>
    </>
  );
}

/** The acceptance form: the role being granted, then username and password. */
export function InvitePage(props: {
  token: string;
  role: string;
  values?: Record<string, string>;
  errors?: Record<string, string>;
}) {
  const e = props.errors ?? {};
  return (
    <section class="narrow">
      <p class="lead">
        You are invited to join with the role <strong>{props.role}</strong>. Choose a username and a password.
      </p>
      <Form action="/invite" id="join" errors={e}>
        <input type="hidden" name="token" value={props.token} />
        <NewAccountFields username={props.values?.username} />
        <button type="submit">Create account</button>
      </Form>
    </section>
  );
}

/** Shown for a missing, unknown, spent, revoked or expired token; says nothing about which. */
export function InvitationInvalid() {
  return (
    <section class="narrow">
      <p class="lead">This invitation is not valid.</p>
      <p>
        It may have been used already, been revoked, or be older than 7 days. Ask an administrator for a new invitation.
        If you already have an account, <a href="/login">sign in</a>.
      </p>
    </section>
  );
}

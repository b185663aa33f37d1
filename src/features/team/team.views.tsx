// The team tab of /settings: invite, the account list with its acts, and the open invitations.
import { Field, Form, Notice, Select, Time } from '../../http/views/components.tsx';
import type { MintedInvitation } from './invitations.service.ts';
import type { Team } from './team.service.ts';

/** Fixed notices selected by a query key after a redirect, so no text is ever reflected from the URL. */
export const TEAM_NOTICES: Record<string, string> = {
  'role-changed': 'Role changed. It applies from that account’s next request.',
  'role-unchanged': 'That account already has this role.',
  'reenrolled': 'Second factor cleared and recovery codes voided. The account enrols again at its next sign-in; its password and sessions are unchanged.',
  'removed': 'Account removed. Its sessions and API tokens stopped working.',
  'revoked': 'Invitation revoked. Its link no longer works.',
  'not-pending': 'That invitation was already used or revoked.',
};

const ROLE_OPTIONS: [string, string][] = [
  ['viewer', 'viewer'],
  ['admin', 'admin'],
];

/** The team tab body. `minted` is shown exactly once, on the response to the mint POST. */
export function TeamTab(props: { team: Team; selfId: string; notice?: string; error?: string; minted?: MintedInvitation }) {
  const { team, minted } = props;
  return (
    <section>
      <h2>Team</h2>
      {props.notice ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {minted ? (
        <Notice kind="success">
          <p>
            Invitation created for the role <strong>{minted.role}</strong>, valid until <Time at={minted.expiresAt} />. Send this
            join link to the invitee; it is shown only once and works once:
          </p>
          <p>
            <code class="secret" id="join-link">
              {minted.joinLink}
            </code>
          </p>
        </Notice>
      ) : null}

      <h3>Invite someone</h3>
      <Form action="/settings/accounts">
        <Select label="Role" name="role" options={ROLE_OPTIONS} value="viewer" />
        <p class="hint">The invitee chooses their own username and password. The link is valid for 7 days.</p>
        <button type="submit">Create invitation</button>
      </Form>

      <h3>Accounts</h3>
      <table>
        <thead>
          <tr>
            <th>Username</th>
            <th>Role</th>
            <th>Second factor</th>
            <th>Created</th>
            <th>Change</th>
          </tr>
        </thead>
        <tbody>
          {team.accounts.map((a) => (
            <tr>
              <td>{a.username}</td>
              <td>
                <span class={`role role-${a.role}`}>{a.role}</span>
              </td>
              <td>{a.totp_enabled === 1 ? 'enrolled' : 'not enrolled'}</td>
              <td>
                <Time at={a.created_at} />
              </td>
              <td>{a.id === props.selfId ? <span class="empty">This is you.</span> : <AccountActions account={a} />}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h3>Open invitations</h3>
      {team.invitations.length === 0 ? (
        <p class="empty">No pending or expired invitations.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Role</th>
              <th>State</th>
              <th>Created</th>
              <th>Expires</th>
              <th>Created by</th>
              <th>Revoke</th>
            </tr>
          </thead>
          <tbody>
            {team.invitations.map((i) => (
              <tr>
                <td>{i.role}</td>
                <td>
                  <span class="badge">{i.state}</span>
                </td>
                <td>
                  <Time at={i.created_at} />
                </td>
                <td>
                  <Time at={i.expires_at} />
                </td>
                <td>{i.created_by_username ?? '—'}</td>
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
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Role change, second-factor reset and removal for one account other than the viewer's own. */
function AccountActions(props: { account: Team['accounts'][number] }) {
  const a = props.account;
  return (
    <>
      <Form action="/settings/accounts/role">
        <input type="hidden" name="account" value={a.id} />
        <Select label={`Role for ${a.username}`} name="role" options={ROLE_OPTIONS} value={a.role} />
        <button type="submit">Save role</button>
      </Form>
      <Form action="/settings/accounts/reenroll">
        <input type="hidden" name="account" value={a.id} />
        <button type="submit" class="secondary">
          Reset second factor
        </button>
      </Form>
      <Form action="/settings/accounts/remove">
        <input type="hidden" name="account" value={a.id} />
        <Field label={`Type ${a.username} to remove this account`} name="confirm" autocomplete="off" />
        <button type="submit" class="danger">
          Remove account
        </button>
      </Form>
    </>
  );
}

/** The acceptance form: the role being granted, then username and password. */
export function InvitePage(props: { token: string; role: string; values?: Record<string, string>; errors?: Record<string, string> }) {
  const e = props.errors ?? {};
  return (
    <section class="narrow">
      <p class="lead">
        You are invited to join with the role <strong>{props.role}</strong>. Choose a username and a password.
      </p>
      {e._form ? <Notice kind="error">{e._form}</Notice> : null}
      <Form action="/invite">
        <input type="hidden" name="token" value={props.token} />
        <Field label="Username" name="username" value={props.values?.username} autocomplete="username" required maxlength={64} error={e.username} />
        <Field label="Password" name="password" type="password" autocomplete="new-password" required error={e.password} hint="8 to 72 characters." />
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
        It may have been used already, been revoked, or be older than 7 days. Ask an administrator for a new invitation. If you
        already have an account, <a href="/login">sign in</a>.
      </p>
    </section>
  );
}

// One account's page under /settings/accounts/<id>: its facts and every act, each destructive one behind a
// confirmation step (account-confirm.views.tsx).
import { OnceField } from '../auth/reveal.tsx';
import { Field, Form, Notice, Select, StackedTable, Time } from '../../http/views/components.tsx';
import { ConfirmStep as ConfirmItsYou } from '../second-factor/confirm-step.tsx';
import { describeFactors, hasSecondFactor } from '../second-factor/factors.ts';
import type { AccountDetail } from './accounts-lifecycle.service.ts';
import { ConfirmStep, type Confirmable, records } from './account-confirm.views.tsx';
import { TokenName } from '../tokens/tokens.section.tsx';
import { REAUTH_ACTION, ROLE_OPTIONS, type OwedConfirmation } from './team.views.tsx';

/** Fixed notices selected by a query key after a redirect, so no text is ever reflected from the URL. */
const CONFIRMED =
  'Confirmed. For the next 10 minutes you can make administrators, create password reset links and invite administrators without confirming again.';

export const ACCOUNT_NOTICES: Record<string, string> = {
  'role-changed': 'Role changed. It applies from that account’s next request.',
  'role-unchanged': 'That account already has this role.',
  reenrolled:
    'Second factor cleared: its authenticator (TOTP) and any passkeys removed, its recovery codes voided. The account enrols again at its next sign-in; its password and sessions are unchanged.',
  suspended:
    'Account suspended. Its sessions ended; it cannot sign in, and its API tokens do not work until it is reactivated.',
  'already-suspended': 'That account was already suspended.',
  reactivated:
    'Account reactivated. It can sign in again, and its API tokens work again unless they were revoked or expired.',
  'already-active': 'That account is already active.',
  'signed-out':
    'Signed out everywhere: every session of this account ended. Its API tokens are untouched and still work.',
  'signed-out-revoked':
    'Signed out everywhere: every session of this account ended, and every API token of it is revoked.',
  'tokens-revoked':
    'Every API token of this account is revoked: each answers 401 from now on. Integrations that used them need new tokens, minted by the account on its Profile.',
  'no-tokens': 'This account had no API tokens, so nothing was revoked.',
  reassigned:
    'Its authored records now belong to the account you chose. Nothing it authored keeps it from being removed.',
  'nothing-to-reassign': 'This account authored no records, so nothing was moved.',
  confirmed: CONFIRMED,
  'confirmed-role': CONFIRMED,
};

/**
 * What the page shows besides the account: the viewer's own id, a notice or error, a confirmation step, a revealed
 * link, and `reauth` when a reset link needs "Confirm it's you" first.
 */
export interface AccountPageProps {
  detail: AccountDetail;
  selfId: string;
  notice?: string;
  /** The page after a reset link's one showing was revisited (reload, Back): it says the link is not shown again. */
  resetLinkGone?: boolean;
  /** The notice's key (the page's `notice` query), where its place on the page depends on it. */
  noticeKey?: string;
  error?: string;
  errors?: Record<string, string>;
  confirm?: { act: Confirmable; heir?: { id: string; username: string } };
  resetLink?: string;
  reauth?: OwedConfirmation;
}

/** The account page body. */
export function AccountPage(props: AccountPageProps) {
  const { account: a } = props.detail;
  const self = a.id === props.selfId;
  return (
    <section class="account">
      <p>
        <a href="/settings?tab=team">Back to the team</a>
      </p>
      <h2>
        {a.username}
        {self ? <span class="empty"> (you)</span> : null}
      </h2>
      {props.notice && !confirmedNow(props) ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {self && props.errors ? <Notice kind="error">{Object.values(props.errors)[0]}</Notice> : null}
      {props.resetLink ? <RevealedLink url={props.resetLink} detail={props.detail} /> : null}
      {props.resetLinkGone ? (
        <div id="reset-link-result">
          <Notice kind="info">
            This reset link was shown once and is not shown again. If it was lost, create a new one: it replaces the
            unused link.
          </Notice>
        </div>
      ) : null}
      {props.confirm ? <ConfirmStep {...props.confirm} detail={props.detail} /> : null}
      <Facts detail={props.detail} />
      <Tokens detail={props.detail} self={self} />
      {self ? <SelfNote /> : <Acts {...props} />}
    </section>
  );
}

/** The account's state at a glance. */
function Facts(props: { detail: AccountDetail }) {
  const { account: a, authored, resetLinkExpiresAt } = props.detail;
  return (
    <dl class="facts">
      <dt>Role</dt>
      <dd>
        <span class={`role role-${a.role}`}>{a.role}</span>
      </dd>
      <dt>State</dt>
      <dd>
        {a.suspended_at === null ? (
          'active'
        ) : (
          <>
            <span class="badge state-suspended">suspended</span> since <Time at={a.suspended_at} />
          </>
        )}
      </dd>
      <dt>Second factor</dt>
      <dd>{describeFactors(a.factors)}</dd>
      <dt>Created</dt>
      <dd>
        <Time at={a.created_at} />
      </dd>
      <dt>Last sign-in</dt>
      <dd>{a.last_sign_in_at === null ? 'never' : <Time at={a.last_sign_in_at} />}</dd>
      <dt>Authored records</dt>
      <dd>{authored === 0 ? 'none' : `${records(authored)} (invitations, channels, single sign-on providers)`}</dd>
      <dt>Password reset link</dt>
      <dd>
        {resetLinkExpiresAt === undefined ? (
          'none'
        ) : (
          <>
            one unused link, valid until <Time at={resetLinkExpiresAt} />
          </>
        )}
      </dd>
    </dl>
  );
}

/**
 * The account's API tokens: name, created, expiry and last use (never a token or its hash), and on another account's
 * page the act that revokes them all.
 */
function Tokens(props: { detail: AccountDetail; self: boolean }) {
  const { account: a, tokenList } = props.detail;
  return (
    <>
      <h3 id="account-tokens">API tokens</h3>
      {tokenList.length === 0 ? (
        <p class="empty">{props.self ? 'You have no API tokens.' : 'This account has no API tokens.'}</p>
      ) : (
        <>
          <p>
            {tokenList.length === 1 ? '1 token' : `${tokenList.length} tokens`}
            {props.self ? ' (yours: revoke them on your Profile)' : ''}:
          </p>
          <StackedTable class="account-tokens" columns={['Name', 'Created', 'Last used', 'Expires']}>
            {tokenList.map((t) => (
              <tr>
                <td>
                  <span class="cell-label">Name: </span>
                  <TokenName token={t} />
                </td>
                <td>
                  <span class="cell-label">Created: </span>
                  <Time at={t.createdAt} />
                </td>
                <td>
                  <span class="cell-label">Last used: </span>
                  {t.lastUsedAt === null ? 'never' : <Time at={t.lastUsedAt} />}
                </td>
                <td>
                  <span class="cell-label">Expires: </span>
                  {t.expiresAt === null ? (
                    'never'
                  ) : t.expired ? (
                    <span class="badge">expired</span>
                  ) : (
                    <Time at={t.expiresAt} />
                  )}
                </td>
              </tr>
            ))}
          </StackedTable>
          {props.self ? null : (
            <p class="actions">
              <a class="button danger" href={`/settings/accounts/${a.id}?confirm=revoke-tokens`}>
                Revoke all API tokens…
              </a>
              <span class="hint">
                Each stops working at once, for good; reactivating the account does not bring them back.
              </span>
            </p>
          )}
        </>
      )}
    </>
  );
}

/** On one's own page: where one's own acts live instead. */
function SelfNote() {
  return (
    <p class="hint">
      This is your own account: another administrator changes its role, suspends or removes it. Change your password,
      second factor and sessions on your <a href="/profile">Profile</a>.
    </p>
  );
}

/** Every act on another account. */
function Acts(props: AccountPageProps) {
  const { account: a, authored, heirs, resetLinkExpiresAt } = props.detail;
  const step = (act: Confirmable) => `/settings/accounts/${a.id}?confirm=${act}`;
  return (
    <>
      <h3>Role</h3>
      {confirmedNow(props, 'role') ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.reauth && a.role !== 'admin' ? (
        <ConfirmItsYou
          place="account-role"
          action={REAUTH_ACTION}
          fields={{ account: a.id, at: 'role' }}
          withCode={props.reauth.withCode}
          why={`${a.username} is a viewer. Making an account an administrator hands it every power of this service, so it asks for your password again.`}
          errors={props.reauth.at === 'role' ? props.reauth.errors : undefined}
        />
      ) : (
        <Form action="/settings/accounts/role" id="account-role" errors={pick(props.errors, 'role')}>
          <input type="hidden" name="account" value={a.id} />
          <Select label={`Role for ${a.username}`} name="role" options={ROLE_OPTIONS} value={a.role} />
          <button type="submit">Save role</button>
        </Form>
      )}

      <h3>Access</h3>
      {a.suspended_at === null ? (
        <p class="actions">
          <a class="button danger" href={step('suspend')}>
            Suspend…
          </a>
          <span class="hint">Blocks every sign-in and API token until reactivated.</span>
        </p>
      ) : (
        <Form action="/settings/accounts/reactivate" class="actions">
          <input type="hidden" name="account" value={a.id} />
          <button type="submit">Reactivate</button>
          <span class="hint">Sign-in and API tokens work again.</span>
        </Form>
      )}
      <p class="actions">
        <a class="button secondary" href={step('sign-out')}>
          Sign out everywhere…
        </a>
        <span class="hint">Ends every session; its API tokens too if you tick the box on the next step.</span>
      </p>

      <h3 id="account-password">Password</h3>
      {confirmedNow(props, 'reset-link') ? <Notice kind="success">{props.notice}</Notice> : null}
      {props.reauth ? (
        <ConfirmItsYou
          place="reset-link"
          action={REAUTH_ACTION}
          fields={{ account: a.id }}
          withCode={props.reauth.withCode}
          why={`A reset link lets whoever holds it take over ${a.username}, so creating one asks for your password again.`}
          errors={props.reauth.at === 'role' ? undefined : props.reauth.errors}
        />
      ) : (
        <Form action="/settings/accounts/reset-link" id="account-reset-link">
          <input type="hidden" name="account" value={a.id} />
          <OnceField />
          <p class="hint">
            A single-use link, valid 24 hours, that lets its holder choose a new password for {a.username}; shown to you
            once. Using it ends every session of {a.username} and revokes all its API tokens; the second factor stays.
            {resetLinkExpiresAt !== undefined ? ' Creating one voids the unused link.' : ''}
          </p>
          <button type="submit" class="secondary">
            Create reset link
          </button>
        </Form>
      )}

      <h3>Second factor</h3>
      {hasSecondFactor(a.factors) ? (
        <p class="actions">
          <a class="button secondary" href={step('reenroll')}>
            Reset second factor…
          </a>
          <span class="hint">Clears the authenticator, every passkey and the recovery codes.</span>
        </p>
      ) : (
        <p class="empty">No second factor: nothing to reset.</p>
      )}

      <h3 id="authored">Authored records</h3>
      {authored === 0 ? (
        <p class="empty">This account authored no records.</p>
      ) : heirs.length === 0 ? (
        <p class="empty">No other active account could receive its {records(authored)}.</p>
      ) : (
        <form method="get" action={`/settings/accounts/${a.id}#confirm`} id="account-reassign">
          <input type="hidden" name="confirm" value="reassign" />
          <Select
            label="Move its authored records to"
            name="to"
            options={heirs.map((h) => [h.id, h.username])}
            hint={`${records(authored)} (invitations, channels, single sign-on providers) ${authored === 1 ? 'keeps' : 'keep'} this account from being removed.`}
          />
          <button type="submit" class="secondary">
            Review the move…
          </button>
        </form>
      )}

      <h3>Remove</h3>
      <Form action="/settings/accounts/remove" id="account-remove" errors={pick(props.errors, 'confirm')}>
        <input type="hidden" name="account" value={a.id} />
        <Field label={`Type ${a.username} to remove this account`} name="confirm" autocomplete="off" />
        <button type="submit" class="danger">
          Remove account
        </button>
      </Form>
    </>
  );
}

/**
 * Whether the page answers a "Confirm it's you" (at `place`, or anywhere when absent): its notice then sits at the act
 * it unlocked (the redirect's anchor), not at the top.
 */
function confirmedNow(props: AccountPageProps, place?: 'role' | 'reset-link'): boolean {
  if (props.noticeKey !== 'confirmed' && props.noticeKey !== 'confirmed-role') return false;
  return place === undefined || (props.noticeKey === 'confirmed-role') === (place === 'role');
}

/** A field's error alone, for the form that has that field. */
function pick(errors: Record<string, string> | undefined, name: string): Record<string, string> | undefined {
  return errors?.[name] ? { [name]: errors[name]! } : undefined;
}

/** A reset link minted by the request before the redirect, shown this once. */
function RevealedLink(props: { url: string; detail: AccountDetail }) {
  const { account: a, resetLinkExpiresAt } = props.detail;
  return (
    <div id="reset-link-result">
      <Notice kind="success">
        <p>
          Reset link created for <strong>{a.username}</strong>
          {resetLinkExpiresAt !== undefined ? (
            <>
              , valid until <Time at={resetLinkExpiresAt} />
            </>
          ) : null}
          . Send it to them over a channel you trust; it is shown only this once, works once, and is not in any log.
          When it is used, every session of {a.username} ends and every API token of it is revoked:
        </p>
        <p>
          <code class="secret" id="reset-link">
            {props.url}
          </code>
        </p>
        {a.suspended_at !== null ? <p>The account is suspended: the link works only once it is reactivated.</p> : null}
      </Notice>
    </div>
  );
}

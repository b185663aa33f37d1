// Profile section: personal API tokens. Mint (name, lifetime, read-only or not) after "Confirm it's you", the new
// token shown once on the page after the mint's redirect, the list (id, created, expires, last used, read-only), and
// revoke behind a confirmation step (`?revoke=<id>`: a second page state with its own button; no script).
import { signedIn, type Ctx } from '../../http/env.ts';
import { OnceField, revealNow } from '../auth/reveal.tsx';
import { Checkbox, Field, Form, Notice, Select, StackedTable, Time } from '../../http/views/components.tsx';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, listTokens, type TokenSummary } from './tokens.service.ts';
import { ConfirmFirstHint, type ProfileFeedback, type ProfileSection } from '../../http/views/profile.tsx';

/** The reveal kind of a new token (held for the page after the mint's redirect), and that page. */
export const TOKEN_REVEAL = 'api-token';
export const TOKEN_REVEAL_PATH = '/profile?reveal=token#profile-tokens';

/** A token as held for its one showing. */
interface HeldToken {
  name: string;
  token: string;
  readOnly?: boolean;
}

/** The token just minted (its one showing) when this is the page after the mint's redirect; `gone` on a reload. */
async function heldToken(c: Ctx): Promise<HeldToken | 'gone' | undefined> {
  if (c.req.query('reveal') !== 'token') return undefined;
  const held = await revealNow(c, TOKEN_REVEAL);
  return held === undefined ? 'gone' : (JSON.parse(held) as HeldToken);
}

/** The one showing of a new token, or word that it was shown already. */
function NewToken(props: { held: HeldToken | 'gone' }) {
  const { held } = props;
  if (held === 'gone') {
    return (
      <Notice kind="info">
        This token was shown once and is not shown again. If you lost it, revoke it below and create a new one.
      </Notice>
    );
  }
  return (
    <Notice kind="success">
      <p>
        {held.readOnly ? (
          <>Read-only token “{held.name}” created: it can read through the API but never change anything.</>
        ) : (
          <>Token “{held.name}” created.</>
        )}{' '}
        Copy it now: it is shown only this once.
      </p>
      <p>
        <code class="secret" id="new-token">
          {held.token}
        </code>
      </p>
    </Notice>
  );
}

/** The public id's first characters: enough to tell two tokens apart, and to match `token.id` from GET /api/me. */
/** A token's name, marked when it is read-only (the Profile list and an administrator's view of an account). */
export function TokenName(props: { token: Pick<TokenSummary, 'name' | 'readOnly'> }) {
  return (
    <>
      {props.token.name}
      {props.token.readOnly ? (
        <>
          {' '}
          <span class="badge">read-only</span>
        </>
      ) : null}
    </>
  );
}

export function shortTokenId(id: string): string {
  return id.slice(0, 8);
}

/** How a token is named in a button or question: its name, and its short id, never any part of the secret. */
function tokenTitle(t: TokenSummary): string {
  return `“${t.name}” (ID ${shortTokenId(t.id)})`;
}

/** The second step of revoking: what breaks, its button, and a way back. */
function RevokeStep(props: { token: TokenSummary }) {
  const t = props.token;
  return (
    <section class="confirm" id="token-revoke" aria-labelledby="token-revoke-title">
      <h3 id="token-revoke-title">Revoke the token {tokenTitle(t)}?</h3>
      <p>
        Created <Time at={t.createdAt} />, last used {t.lastUsedAt === null ? 'never' : <Time at={t.lastUsedAt} />}.
        Anything that uses it (a script, a dashboard) is refused from the next request on. This cannot be undone: to
        restore access, create a new token and give it to that integration.
      </p>
      <Form action="/profile/tokens/revoke" class="actions">
        <input type="hidden" name="token" value={t.id} />
        <button type="submit" class="danger">
          Revoke {tokenTitle(t)}
        </button>
        <a href="/profile#profile-tokens">Cancel</a>
      </Form>
    </section>
  );
}

/** The mint form (with a refused post's values and errors). */
function MintForm(props: { feedback?: ProfileFeedback }) {
  const form = props.feedback?.form?.id === 'token-mint' ? props.feedback.form : undefined;
  return (
    <Form action="/profile/tokens" id="token-mint" errors={form?.errors}>
      <OnceField />
      <Field label="Token name" name="name" value={form?.values?.name} required maxlength={100} />
      <Select
        label="Expires after"
        name="expiry"
        value={form?.values?.expiry ?? DEFAULT_EXPIRY}
        options={Object.entries(EXPIRY_CHOICES).map(([value, choice]) => [value, choice.label])}
        hint="A token past its expiry stops working, as if revoked."
      />
      <Checkbox
        label="Read-only (can only read, never change anything)"
        name="read_only"
        checked={form?.values?.read_only !== undefined}
        hint="For dashboards and scripts that only look: every write through it is refused."
      />
      <button type="submit">Create token</button>
    </Form>
  );
}

export const tokensSection: ProfileSection = {
  key: 'tokens',
  render: async (deps, c, feedback) => {
    const session = signedIn(c);
    const [tokens, held, confirmed] = await Promise.all([
      listTokens(deps, session.account.id),
      heldToken(c),
      recentlyConfirmed(deps, session.idHash),
    ]);
    // Only one of the caller's own tokens has a step; a stale or foreign id shows none.
    const revoking = tokens.find((t) => t.id === c.req.query('revoke'));
    return (
      <section>
        <h2>API tokens</h2>
        {held ? <NewToken held={held} /> : null}
        {revoking ? <RevokeStep token={revoking} /> : null}
        <p class="hint">
          A token acts as you on the JSON API under /api/, with your current role. Send it as{' '}
          <code>Authorization: Bearer svc_pat_…</code>.
        </p>
        {confirmed ? <MintForm feedback={feedback} /> : <ConfirmFirstHint act="create a token" />}
        {tokens.length === 0 ? (
          <p class="empty">You have no API tokens.</p>
        ) : (
          <StackedTable class="tokens" columns={['Name', 'ID', 'Created', 'Expires', 'Last used', 'Action']}>
            {tokens.map((t) => (
              <tr>
                <td>
                  <TokenName token={t} />
                </td>
                <td>
                  <span class="cell-label">ID: </span>
                  <code>{shortTokenId(t.id)}</code>
                </td>
                <td>
                  <span class="cell-label">Created: </span>
                  <Time at={t.createdAt} />
                </td>
                <td>
                  <span class="cell-label">Expires: </span>
                  {t.expiresAt === null ? 'never' : <Time at={t.expiresAt} />}
                  {t.expired ? (
                    <>
                      {' '}
                      <span class="badge">expired</span>
                    </>
                  ) : null}
                </td>
                <td>
                  <span class="cell-label">Last used: </span>
                  {t.lastUsedAt === null ? 'never' : <Time at={t.lastUsedAt} />}
                </td>
                <td>
                  <a
                    class="button secondary"
                    href={`/profile?revoke=${encodeURIComponent(t.id)}#token-revoke`}
                    aria-label={`Revoke… ${tokenTitle(t)}`}
                  >
                    Revoke…
                  </a>
                </td>
              </tr>
            ))}
          </StackedTable>
        )}
      </section>
    );
  },
};

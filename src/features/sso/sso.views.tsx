// SSO views: sign-in buttons, the Settings tab (its create form and the bindings; each provider's row and forms are in
// sso.provider-panel.tsx) and the profile section body.
import type { Child } from 'hono/jsx';
import { Field, Form, Notice, Time } from '../../http/views/components.tsx';
import { SecretRetryFields, withSecretAgain } from '../../http/views/secret-retry.tsx';
import type { EndSessionState } from './sso.logout.service.ts';
import type { DiscoveryProblem } from './sso.discovery-check.ts';
import type { ProviderView } from './sso.providers.service.ts';
import { ClientAuthSelect, NO_SECRET, ProviderPanel, SaveAnyway, type TabFormState } from './sso.provider-panel.tsx';
import type { IdentityListing } from './sso.repo.ts';
import { wordsOf } from '../refusals.ts';
import { DISCOVERY_REFUSALS } from './sso.refusals.ts';

/** A fixed table's entry for a query value; only own keys, so `?notice=constructor` finds nothing. */
export function pick<T>(table: Record<string, T>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** One sign-in button per enabled provider, under the password form. */
export function SsoButtons(props: { providers: ProviderView[] }) {
  if (props.providers.length === 0) return null;
  return (
    <div class="sso-buttons">
      <p class="hint">Or sign in with a linked identity:</p>
      {props.providers.map((p) => (
        <a class="button secondary" href={`/login/sso/${p.slug}`}>
          Sign in with {p.display_name}
        </a>
      ))}
    </div>
  );
}

/** What a failed discovery means, in the admin's words (its catalogue's), shown beside the issuer field. */
export function discoveryMessage(problem: DiscoveryProblem, issuer: string): string {
  return wordsOf(DISCOVERY_REFUSALS[problem], { issuer });
}

/** Notices that report no success: shown as information. */
const INFO_NOTICES = ['Saved without', 'Declared without', 'That provider no longer exists'];

/** The Settings tab body. */
export function SsoTabView(props: {
  origin: string;
  providers: ProviderView[];
  /** Per provider with "Sign out at the provider too" on: what its discovery says of its end-session endpoint. */
  endSessions: Map<string, EndSessionState>;
  identities: IdentityListing[];
  notice?: string;
  error?: string;
  state?: TabFormState;
}) {
  const { state } = props;
  const createState = state?.form === 'create' ? state : undefined;
  const askSecret = createState?.askSecret ?? false;
  const createErrors = withSecretAgain(createState?.errors ?? {}, {
    field: 'client_secret',
    ask: askSecret,
    what: 'client secret',
    skipLabel: NO_SECRET,
  });
  return (
    <section>
      <h2>Single sign-on</h2>
      {props.notice ? (
        <Notice kind={INFO_NOTICES.some((start) => props.notice!.startsWith(start)) ? 'info' : 'success'}>
          {props.notice}
        </Notice>
      ) : null}
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <p class="hint">
        Providers only authenticate accounts that already exist: each person links their identity from their Profile.
        Password sign-in always keeps working.
      </p>
      <h3>Providers</h3>
      {props.providers.length === 0 ? <p class="empty">No provider is declared.</p> : null}
      {props.providers.map((p) => (
        <ProviderPanel
          provider={p}
          origin={props.origin}
          endSession={props.endSessions.get(p.id)}
          linked={props.identities.filter((i) => i.provider_id === p.id).length}
          state={state?.id === p.id ? state : undefined}
        />
      ))}
      <h3>Declare a provider</h3>
      <Form action="/settings/sso" class="sso-create" id="sso-create" errors={createErrors}>
        <Field
          label="Display name"
          name="display_name"
          value={createState?.values.display_name}
          required
          maxlength={100}
        />
        <Field
          label="Slug"
          name="slug"
          value={createState?.values.slug}
          required
          maxlength={64}
          hint="Lowercase letters, digits and hyphens; part of the callback URLs."
        />
        <Field
          label="Issuer URL"
          name="issuer"
          type="url"
          value={createState?.values.issuer}
          required
          hint="Must be https; svc checks <issuer>/.well-known/openid-configuration before saving."
        />
        <Field label="Client ID" name="client_id" value={createState?.values.client_id} required maxlength={255} />
        <Field
          label="Client secret"
          name="client_secret"
          type="password"
          autocomplete="off"
          hint="Leave blank for a public client (PKCE only)."
        />
        <SecretRetryFields
          ask={askSecret}
          skipLabel={NO_SECRET}
          hint="The provider is saved without a client secret."
        />
        <ClientAuthSelect value={createState?.values.client_auth_method} />
        <SaveAnyway state={createState} />
        <button type="submit">Declare provider</button>
      </Form>
      <h3>Linked identities</h3>
      <IdentitiesTable identities={props.identities} />
    </section>
  );
}

function IdentitiesTable(props: { identities: IdentityListing[] }) {
  if (props.identities.length === 0) return <p class="empty">No identity is linked.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Provider</th>
          <th>Account</th>
          <th>Identity</th>
          <th>Linked</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {props.identities.map((i) => (
          <tr>
            <td>{i.provider_name}</td>
            <td>{i.username}</td>
            <td>{i.label}</td>
            <td>
              <Time at={i.linked_at} />
            </td>
            <td>
              <Form action="/settings/sso/identity/remove" class="inline">
                <input type="hidden" name="id" value={i.id} />
                <button
                  type="submit"
                  class="secondary"
                  aria-label={`Remove ${i.provider_name} identity of ${i.username}`}
                >
                  Remove
                </button>
              </Form>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The profile section: the caller's identities with Unlink, and a Link button per enabled provider not yet linked. */
export function SsoProfileView(props: {
  identities: IdentityListing[];
  providers: ProviderView[];
  notice?: { kind: 'success' | 'error'; text: string };
}): Child {
  const linked = new Set(props.identities.map((i) => i.provider_slug));
  const linkable = props.providers.filter((p) => !linked.has(p.slug));
  return (
    <section>
      <h2>Single sign-on</h2>
      {props.notice ? <Notice kind={props.notice.kind}>{props.notice.text}</Notice> : null}
      {props.identities.length === 0 ? (
        <p class="empty">No identity is linked to your account.</p>
      ) : (
        <ul class="identities">
          {props.identities.map((i) => (
            <li>
              <strong>{i.provider_name}</strong>: {i.label} (linked <Time at={i.linked_at} />){' '}
              <Form action="/profile/sso/unlink" class="inline">
                <input type="hidden" name="id" value={i.id} />
                <button type="submit" class="secondary">
                  Unlink {i.provider_name}
                </button>
              </Form>
            </li>
          ))}
        </ul>
      )}
      {linkable.map((p) => (
        // biome-ignore lint/a11y/noAmbiguousAnchorText: "Link" is the verb here ("Link Acme SSO"), not the word for a hyperlink
        <a class="button secondary" href={`/profile/sso/${p.slug}/link`}>
          Link {p.display_name}
        </a>
      ))}
    </section>
  );
}

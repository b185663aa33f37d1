// SSO views: sign-in buttons, the Settings tab (providers, callback URLs, bindings) and the profile section body.
import type { Child } from 'hono/jsx';
import { Checkbox, ConfirmedDelete, Field, Form, Notice, Select, Time } from '../../http/views/components.tsx';
import { SecretRetryFields, withSecretAgain } from '../../http/views/secret-retry.tsx';
import type { EndSessionState } from './sso.logout.service.ts';
import type { DiscoveryProblem, ProviderView } from './sso.providers.service.ts';
import type { ClientAuthSetting } from './sso.schema.ts';
import type { IdentityListing } from './sso.repo.ts';
import { wordsOf } from '../refusals.ts';
import { DISCOVERY_REFUSALS } from './sso.refusals.ts';

/** A fixed table's entry for a query value; only own keys, so `?notice=constructor` finds nothing. */
export function pick<T>(table: Record<string, T>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** The two callback URLs to register at a provider. */
export function callbackUrls(origin: string, slug: string): { login: string; link: string } {
  return { login: `${origin}/login/sso/${slug}/callback`, link: `${origin}/profile/sso/${slug}/link/callback` };
}

/** The post-logout redirect URI to register at a provider: the sign-in page, under svc's external origin. */
export function postLogoutRedirectUri(origin: string): string {
  return `${origin}/login`;
}

/** The back-channel logout URI to register at a provider. */
export function backchannelLogoutUri(origin: string, slug: string): string {
  return `${origin}/login/sso/${slug}/backchannel-logout`;
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

/** A failed form on the tab: which form, its errors, the values to show again, and whether discovery failed. */
export interface TabFormState {
  form: 'create' | 'update' | 'secret';
  id?: string;
  errors: Record<string, string>;
  values: Record<string, string>;
  /** Discovery failed: the form offers "Save anyway". */
  offerSaveAnyway?: boolean;
  /** The refused attempt carried a client secret, never shown again: the form asks for it again (secret-retry.tsx). */
  askSecret?: boolean;
}

/** The skip box's label on the create form (and on the secret form of a provider without a secret). */
const NO_SECRET = 'No secret: a public client (PKCE only)';
/** The skip box's label on the secret form of a provider that has a secret: a blank field keeps it. */
const KEEP_SECRET = 'Keep the stored secret';

/** The "Client authentication" choices, automatic first (the default). */
const CLIENT_AUTH_OPTIONS: [ClientAuthSetting, string][] = [
  ['automatic', 'Automatic (recommended)'],
  ['client_secret_basic', 'client_secret_basic (header)'],
  ['client_secret_post', 'client_secret_post (body)'],
];

/** The "Client authentication" select of the create and change forms. */
function ClientAuthSelect(props: { value?: string }) {
  return (
    <Select
      label="Client authentication"
      name="client_auth_method"
      options={CLIENT_AUTH_OPTIONS}
      value={props.value ?? 'automatic'}
      hint="How svc sends the client secret to the provider's token endpoint. Automatic sends it in the HTTP Basic header and, if the provider refuses svc's credentials, once more in the request body, then remembers what worked; it suits most providers. client_secret_basic and client_secret_post send it only one way, and are accepted only if the provider's discovery lists them. A public client (no secret) sends no credentials."
    />
  );
}

/** What a provider row says of its client authentication: none, the chosen method, or what automatic uses. */
function ClientAuthFact(props: { provider: ProviderView }) {
  const p = props.provider;
  if (!p.secretSet) return <>None: a public client (PKCE only) sends no client credentials</>;
  if (p.clientAuthMethod !== 'automatic')
    return (
      <>
        <code>{p.clientAuthMethod}</code> (chosen)
      </>
    );
  const learned = p.clientAuthLearned;
  if (!learned) return <>Automatic: the HTTP Basic header, then the request body once if the provider refuses it</>;
  return (
    <>
      Automatic, using <code>{learned.method}</code>: learned <Time at={learned.at} /> when the provider refused the
      other method
    </>
  );
}

/** What a failed discovery means, in the admin's words (its catalogue's), shown beside the issuer field. */
export function discoveryMessage(problem: DiscoveryProblem, issuer: string): string {
  return wordsOf(DISCOVERY_REFUSALS[problem], { issuer });
}

/** The box that lets an admin save settings whose discovery failed, shown only after it failed. */
function SaveAnyway(props: { state?: TabFormState }) {
  if (!props.state?.offerSaveAnyway) return null;
  return (
    <Checkbox
      label="Save anyway: the provider is not reachable from here yet"
      name="save_anyway"
      checked={props.state.values.save_anyway !== undefined}
      hint="Sign-in with it fails until svc can reach it."
    />
  );
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

/** What changing the issuer does to a provider's bindings, beside the field. */
function issuerHint(linked: number): string {
  const which =
    linked === 0
      ? 'any identity linked through this provider'
      : linked === 1
        ? 'the 1 identity linked through this provider'
        : `the ${linked} identities linked through this provider`;
  return `Changing the issuer removes ${which} and ends the sessions signed in through it; people then link again from their Profile.`;
}

/** What "Sign out at the provider too" does for this provider now, in the admin's words. */
function signOutText(p: ProviderView, endSession: EndSessionState | undefined): string {
  if (!p.signOutAtProvider) return 'Off: signing out of svc leaves the session at the provider as it is.';
  if (!p.enabled) return 'On, but the provider is disabled: signing out stays local to svc.';
  if (endSession === undefined || endSession.kind === 'unknown')
    return 'On; svc could not read the provider’s discovery just now, so for now signing out stays local to svc.';
  if (endSession.kind === 'slow')
    return 'On; the provider’s discovery has not answered yet, so for now signing out stays local to svc. Reload to check again.';
  if (endSession.kind === 'absent')
    return 'On, but the provider’s discovery names no end-session endpoint: signing out stays local to svc.';
  return `On: after signing out of svc, the browser is sent to ${endSession.endpoint} to sign out there too.`;
}

function ProviderPanel(props: {
  provider: ProviderView;
  origin: string;
  endSession: EndSessionState | undefined;
  linked: number;
  state?: TabFormState;
}) {
  const p = props.provider;
  const urls = callbackUrls(props.origin, p.slug);
  const up = props.state?.form === 'update' ? props.state : undefined;
  const sec = props.state?.form === 'secret' ? props.state : undefined;
  const askSecret = sec?.askSecret ?? false;
  const skipLabel = p.secretSet ? KEEP_SECRET : NO_SECRET;
  const secErrors = withSecretAgain(sec?.errors ?? {}, {
    field: 'client_secret',
    ask: askSecret,
    what: 'new client secret',
    skipLabel,
  });
  return (
    <article class="sso-provider" id={`provider-${p.slug}`}>
      <h4>
        {p.display_name} <span class="badge">{p.enabled ? 'enabled' : 'disabled'}</span>{' '}
        <span class="badge">secret: {p.secretSet ? 'set' : 'none'}</span>
      </h4>
      <dl class="facts">
        <dt>Issuer</dt>
        <dd>
          <code>{p.issuer}</code>
        </dd>
        <dt>Client ID</dt>
        <dd>
          <code>{p.client_id}</code>
        </dd>
        <dt>Client authentication</dt>
        <dd>
          <ClientAuthFact provider={p} />
        </dd>
        <dt>Sign-in callback URL</dt>
        <dd>
          <code>{urls.login}</code>
        </dd>
        <dt>Profile link callback URL</dt>
        <dd>
          <code>{urls.link}</code>
        </dd>
        <dt>Back-channel logout URL</dt>
        <dd>
          <code>{backchannelLogoutUri(props.origin, p.slug)}</code>
        </dd>
        <dt>Post-logout redirect URL</dt>
        <dd>
          <code>{postLogoutRedirectUri(props.origin)}</code>
        </dd>
        <dt>Sign out at the provider</dt>
        <dd>{signOutText(p, props.endSession)}</dd>
        <dt>Disabling</dt>
        <dd>Disabling ends the sessions it opened; password sessions and API tokens stay.</dd>
      </dl>
      <details open={up !== undefined || sec !== undefined}>
        <summary>Change {p.display_name}</summary>
        <Form action="/settings/sso/update" id={`sso-update-${p.id}`} errors={up?.errors}>
          <input type="hidden" name="id" value={p.id} />
          <Field
            label="Display name"
            name="display_name"
            value={up?.values.display_name ?? p.display_name}
            required
            maxlength={100}
          />
          <Field label="Slug" name="slug" value={up?.values.slug ?? p.slug} required maxlength={64} />
          <Field
            label="Issuer URL"
            name="issuer"
            type="url"
            value={up?.values.issuer ?? p.issuer}
            required
            hint={issuerHint(props.linked)}
          />
          <Field
            label="Client ID"
            name="client_id"
            value={up?.values.client_id ?? p.client_id}
            required
            maxlength={255}
            hint="Changing it ends the sessions signed in through this provider."
          />
          <ClientAuthSelect value={up?.values.client_auth_method ?? p.clientAuthMethod} />
          <Checkbox
            label="Enabled"
            name="enabled"
            checked={up ? up.values.enabled !== undefined : p.enabled}
            hint="Disabling ends the sessions it opened: its logout tokens are refused while it is disabled."
          />
          <Checkbox
            label="Sign out at the provider too"
            name="sign_out_at_provider"
            checked={up ? up.values.sign_out_at_provider !== undefined : p.signOutAtProvider}
            hint="Signing out of a session this provider opened then also signs out at the provider, when its discovery names an end-session endpoint. Register the post-logout redirect URL there."
          />
          <SaveAnyway state={up} />
          <button type="submit">Save {p.display_name}</button>
        </Form>
        <Form action="/settings/sso/secret" id={`sso-secret-${p.id}`} errors={secErrors}>
          <input type="hidden" name="id" value={p.id} />
          <Field
            label="New client secret"
            name="client_secret"
            type="password"
            autocomplete="off"
            hint="Blank keeps the stored secret."
          />
          <SecretRetryFields
            ask={askSecret}
            skipLabel={skipLabel}
            hint={p.secretSet ? 'The stored secret stays as it is.' : 'The provider stays a public client.'}
          />
          <Checkbox label="Clear the secret (public client)" name="clear_secret" />
          <button type="submit">Save secret</button>
        </Form>
        <Form action="/settings/sso/delete">
          <input type="hidden" name="id" value={p.id} />
          <button type="submit" class="danger">
            Delete {p.display_name} and its linked identities…
          </button>
        </Form>
      </details>
    </article>
  );
}

/** The confirmation step before a provider is deleted: what goes with it, and how many linked identities. */
export function DeleteProviderConfirm(props: { provider: ProviderView; linked: number }) {
  const p = props.provider;
  const n = props.linked;
  const identities =
    n === 0
      ? 'No identity is linked through it.'
      : `${n} linked ${n === 1 ? 'identity is' : 'identities are'} deleted with it: ${n === 1 ? 'that person' : 'those people'} can no longer sign in with ${p.display_name}. Their accounts stay, and password sign-in keeps working.`;
  return (
    <section class="confirm">
      <h2>Delete the provider {p.display_name}?</h2>
      <p>
        Its sign-in button goes at once, and every session signed in through it ends. {identities} This cannot be
        undone; to pause the provider instead, change it and untick Enabled.
      </p>
      <div class="actions">
        <ConfirmedDelete action="/settings/sso/delete" id={p.id}>
          Delete {p.display_name}
        </ConfirmedDelete>
        <a href={`/settings?tab=sso#provider-${p.slug}`}>Cancel</a>
      </div>
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

// A declared provider on the SSO Settings tab: its row (what to register at the provider, how it authenticates, what
// signing out does), its change and secret forms, the delete confirmation, and the form state and fields the
// tab's create form shares with them.
import { Checkbox, ConfirmedDelete, Field, Form, Select, Time } from '../../http/views/components.tsx';
import { SecretRetryFields, withSecretAgain } from '../../http/views/secret-retry.tsx';
import type { EndSessionState } from './sso.logout.service.ts';
import type { ProviderView } from './sso.providers.service.ts';
import type { ClientAuthSetting } from './sso.schema.ts';
import { backchannelLogoutUri, callbackUrls, postLogoutRedirectUri } from './sso.urls.ts';

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
export const NO_SECRET = 'No secret: a public client (PKCE only)';
/** The skip box's label on the secret form of a provider that has a secret: a blank field keeps it. */
const KEEP_SECRET = 'Keep the stored secret';

/** The "Client authentication" choices, automatic first (the default). */
const CLIENT_AUTH_OPTIONS: [ClientAuthSetting, string][] = [
  ['automatic', 'Automatic (recommended)'],
  ['client_secret_basic', 'client_secret_basic (header)'],
  ['client_secret_post', 'client_secret_post (body)'],
];

/** The "Client authentication" select of the create and change forms. */
export function ClientAuthSelect(props: { value?: string }) {
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

/** The box that lets an admin save settings whose discovery failed, shown only after it failed. */
export function SaveAnyway(props: { state?: TabFormState }) {
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

export function ProviderPanel(props: {
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

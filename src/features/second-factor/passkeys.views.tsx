// Passkey pages and parts: the page that adds one (it runs the registration ceremony), and the steps Profile shows
// in its passkeys section to rename or remove one (plain forms, no script).
import { CeremonyForm } from '../../http/ceremony.tsx';
import { Field, Form, Notice, Time } from '../../http/views/components.tsx';
import { PASSKEY_NAME_MAX } from './passkeys.ceremony.ts';
import type { OwnPasskey } from './passkeys.service.ts';

/** Where Profile lists the passkeys. */
export const PASSKEYS_ANCHOR = '/profile#profile-passkeys';

/** The page that adds a passkey: its name, and the button that runs the ceremony. */
export function AddPasskeyPage(props: { error?: string; name?: string }) {
  return (
    <section class="narrow">
      <p class="lead">
        A passkey signs you in with this device’s screen lock or a security key: nothing to type, and nothing a
        look-alike site could reuse. It also serves as your second factor after a password.
      </p>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <CeremonyForm
        kind="register"
        id="passkey-add"
        action="/profile/passkeys/add"
        options="/profile/passkeys/options"
        unavailable="Adding a passkey needs JavaScript and a browser that supports passkeys. Open this page in such a browser to add one."
      >
        <Field
          label="Name for this passkey"
          name="name"
          value={props.name}
          maxlength={PASSKEY_NAME_MAX}
          hint="So you can tell your passkeys apart, such as “Work laptop” or “Blue security key”. Left empty, svc names it after its kind."
        />
        <button type="submit">Add a passkey</button>
      </CeremonyForm>
      <p>
        <a href={PASSKEYS_ANCHOR}>Cancel</a>
      </p>
    </section>
  );
}

/** How a passkey is named in a question or a button. */
export function passkeyTitle(p: Pick<OwnPasskey, 'name'>): string {
  return `“${p.name}”`;
}

/** The rename step: the new name, and a way back. */
export function RenamePasskeyStep(props: { passkey: OwnPasskey; error?: string }) {
  const p = props.passkey;
  return (
    <section class="confirm" id="passkey-rename" aria-labelledby="passkey-rename-title">
      <h3 id="passkey-rename-title">Rename the passkey {passkeyTitle(p)}</h3>
      <Form
        action="/profile/passkeys/rename"
        id="passkey-rename-form"
        errors={props.error ? { name: props.error } : {}}
      >
        <input type="hidden" name="id" value={p.id} />
        <Field label="New name" name="name" value={p.name} required maxlength={PASSKEY_NAME_MAX} />
        <div class="actions">
          <button type="submit">Save the name</button>
          <a href={PASSKEYS_ANCHOR}>Cancel</a>
        </div>
      </Form>
    </section>
  );
}

/** The second step of removing: what it changes, its button, and a way back. */
export function RemovePasskeyStep(props: { passkey: OwnPasskey; lastFactor: boolean }) {
  const p = props.passkey;
  return (
    <section class="confirm" id="passkey-remove" aria-labelledby="passkey-remove-title">
      <h3 id="passkey-remove-title">Remove the passkey {passkeyTitle(p)}?</h3>
      <p>
        Added <Time at={p.createdAt} />, last used {p.lastUsedAt === null ? 'never' : <Time at={p.lastUsedAt} />}. Once
        removed it no longer signs you in, and svc forgets it; the device or password manager may still list it until
        you delete it there too.
      </p>
      {props.lastFactor ? (
        <p>
          <strong>It is your account’s last second factor.</strong> Without it, signing in asks for your password only,
          and your recovery codes stop working.
        </p>
      ) : null}
      <Form action="/profile/passkeys/remove" class="actions">
        <input type="hidden" name="id" value={p.id} />
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="danger">
          Remove {passkeyTitle(p)}
        </button>
        <a href={PASSKEYS_ANCHOR}>Cancel</a>
      </Form>
    </section>
  );
}

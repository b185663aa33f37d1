// The public password reset page: choose a new password, or one page for a link that cannot be used.
import { Form, Notice } from '../../http/views/components.tsx';
import { NewPasswordField } from '../auth/new-password-field.tsx';

/** The form behind a live link: the account's name (for password managers too) and the new password. */
export function ResetPage(props: { token: string; username: string; errors?: Record<string, string> }) {
  return (
    <section class="narrow">
      <p class="lead">
        Choose a new password for <strong>{props.username}</strong>.
      </p>
      <Form action="/reset" id="reset" errors={props.errors}>
        <input type="hidden" name="token" value={props.token} />
        <input type="hidden" name="username" value={props.username} autocomplete="username" />
        <NewPasswordField consequence="Every session of this account ends and every API token of it is revoked (mint new ones on your Profile); a second factor stays as it is." />
        <button type="submit">Set new password</button>
      </Form>
    </section>
  );
}

/** Shown for a missing, unknown, used, replaced or expired link; says nothing about which. */
export function ResetInvalid() {
  return (
    <section class="narrow">
      <p class="lead">This password reset link is not valid.</p>
      <p>
        It may have been used already, been replaced by a newer link, or be older than 24 hours. Ask an administrator
        for a new one. If you know your password, <a href="/login">sign in</a>.
      </p>
    </section>
  );
}

/** Shown for a live link whose account is suspended. */
export function ResetSuspended() {
  return (
    <section class="narrow">
      <Notice kind="error">This account is suspended, so its password cannot be reset now.</Notice>
      <p>Ask an administrator to reactivate it; the link works again until it expires.</p>
    </section>
  );
}

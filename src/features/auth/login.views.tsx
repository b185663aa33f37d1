// The sign-in page.
import type { Child } from 'hono/jsx';
import { CeremonyForm } from '../../http/ceremony.tsx';
import { Field, Form, Notice } from '../../http/views/components.tsx';

/** The refusal text for a throttled attempt. */
export function lockedMessage(retryAfterMs: number): string {
  const minutes = Math.ceil(retryAfterMs / 60_000);
  // Second-factor locks grow to a day: past two hours, say hours.
  const wait = minutes > 120 ? `${Math.ceil(minutes / 60)} hours` : minutes === 1 ? '1 minute' : `${minutes} minutes`;
  return `Too many failed attempts. Try again in ${wait}.`;
}

/** Fixed notices selected by a query key, so no text is ever reflected from the URL. */
export const LOGIN_NOTICES: Record<string, string> = {
  'signed-out': 'You are signed out.',
  'setup-done': 'The first administrator account is ready. Sign in with it.',
  invited: 'Your account is ready. Sign in with your new username and password.',
  'session-ended': 'Your session has ended. Sign in again.',
  'code-attempts': 'Too many wrong codes. Sign in again with your password.',
  'password-reset': 'Your new password is set and every session of the account has ended. Sign in with it.',
  unlinked:
    'Identity unlinked. You had signed in through it, so every session it opened has ended, this one too. Sign in with your password.',
};

/**
 * Sign-in with a passkey: one step, both factors. Shown by the ceremony script when the browser can run it; otherwise
 * its words say why, and the password form above works as ever.
 */
export function PasskeySignInForm() {
  return (
    <section class="passkey-sign-in" aria-labelledby="passkey-sign-in-heading">
      <h2 id="passkey-sign-in-heading">Sign in with a passkey</h2>
      <CeremonyForm
        kind="sign-in"
        id="passkey-sign-in"
        action="/login/passkey"
        options="/login/passkey/options"
        unavailable="Signing in with a passkey needs JavaScript and a browser that supports passkeys. Sign in with your password instead."
      >
        <p class="hint">No password or code needed: your passkey proves both.</p>
        <button type="submit" class="secondary">
          Sign in with a passkey
        </button>
      </CeremonyForm>
    </section>
  );
}

/** Username/password form, with an optional error or notice, and any extra sign-in options below. */
export function LoginPage(props: { username?: string; error?: string; notice?: string; extra?: Child }) {
  return (
    <section class="narrow">
      {props.notice ? <Notice kind="info">{props.notice}</Notice> : null}
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <Form action="/login" id="login">
        <Field
          label="Username"
          name="username"
          value={props.username}
          autocomplete="username"
          required
          maxlength={64}
        />
        <Field label="Password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </Form>
      <PasskeySignInForm />
      {props.extra}
    </section>
  );
}

/**
 * Shown after signing out of a session an identity provider opened, while the browser moves on (by the response's
 * Refresh header, which is no form submission) to sign out at that provider too; the link is for a browser that does
 * not follow it.
 */
export function SignOutOnwardPage(props: { path: string; at: string }) {
  return (
    <section class="narrow">
      <Notice kind="info">You are signed out of svc.</Notice>
      <p class="lead">Now signing you out at {props.at}…</p>
      <p>
        If nothing happens, <a href={props.path}>continue to sign out at {props.at}</a>.
      </p>
    </section>
  );
}

/** Shown by /login (and so by /) while no account exists: nothing to sign in to yet, and where the setup link is. */
export function SetupPendingPage() {
  return (
    <section class="narrow">
      <p class="lead">svc is not set up yet: no account exists, so there is nothing to sign in to.</p>
      <p>
        The first administrator account is created from the setup link. The service prints it in its log at every start
        while no account exists, in a line like <code>setup: open https://…/setup?token=…</code>. Whoever runs the
        service can read it there (for example with <code>journalctl</code> or <code>docker logs</code>).
      </p>
      <p>
        If the operator pinned the token with the <code>SVC_SETUP_TOKEN</code> setting,{' '}
        <a href="/setup">open the setup page</a> and enter that token.
      </p>
    </section>
  );
}

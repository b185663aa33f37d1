// Pages of the second factor: the two-factor step, the enrolment offer, the QR/secret page, the recovery codes.
import { raw } from 'hono/html';
import { Field, Form, Notice } from '../../http/views/components.tsx';

/** The refusal text for a throttled attempt. */
export function lockedMessage(retryAfterMs: number): string {
  const minutes = Math.ceil(retryAfterMs / 60_000);
  // Second-factor locks grow to a day: past two hours, say hours.
  const wait = minutes > 120 ? `${Math.ceil(minutes / 60)} hours` : minutes === 1 ? '1 minute' : `${minutes} minutes`;
  return `Too many failed attempts. Try again in ${wait}.`;
}

/** A "leave" button for half-signed-in pages, which have no navigation. */
function CancelSignIn() {
  return (
    <Form action="/logout" class="inline">
      <button type="submit" class="secondary">
        Cancel and sign out
      </button>
    </Form>
  );
}

/** The two-factor step after the first factor. */
export function TotpStepPage(props: { error?: string }) {
  return (
    <section class="narrow">
      <p class="lead">Enter the code from your authenticator app to finish signing in.</p>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <Form action="/login/totp">
        <Field
          label="Authentication code"
          name="code"
          autocomplete="one-time-code"
          required
          maxlength={64}
          hint="The 6-digit code from your app, or one of your recovery codes (xxxxx-xxxxx-xxxxx)."
        />
        <button type="submit">Verify</button>
      </Form>
      <CancelSignIn />
    </section>
  );
}

/** Offered at the first sign-in (and after an admin re-enrolment): set up now, or skip. */
export function EnrolOfferPage(props: { error?: string }) {
  return (
    <section class="narrow">
      <p class="lead">
        Protect your account with a second factor: a 6-digit code from an authenticator app, asked for after your password.
      </p>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <Form action="/login/enrol">
        <input type="hidden" name="action" value="start" />
        <Field label="Current password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Set up two-factor authentication</button>
      </Form>
      <Form action="/login/enrol">
        <input type="hidden" name="action" value="skip" />
        <p class="hint">You can set it up later from your profile.</p>
        <button type="submit" class="secondary">
          Skip for now
        </button>
      </Form>
    </section>
  );
}

/** The new secret as a QR code, as text and as a URI, and the field for the confirming code. */
export function EnrolSecretPage(props: {
  action: string;
  hidden?: Record<string, string>;
  svg: string;
  secret: string;
  uri: string;
  error?: string;
  cancelHref?: string;
}) {
  return (
    <section class="narrow">
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <p>Scan this code with your authenticator app, or enter the secret by hand.</p>
      {/* qrSvg() checked this markup against the fixed shape qrcode emits; it carries no text from the request. */}
      <figure class="qr" aria-label="QR code of the set-up key">
        {raw(props.svg)}
      </figure>
      <dl class="facts">
        <dt>Secret key</dt>
        <dd>
          <code class="secret" id="totp-secret">
            {props.secret}
          </code>
        </dd>
        <dt>Set-up link</dt>
        <dd>
          <code class="secret">{props.uri}</code>
        </dd>
      </dl>
      <p class="hint">Time-based, SHA1, 6 digits, every 30 seconds.</p>
      <Form action={props.action}>
        {Object.entries(props.hidden ?? {}).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <Field label="Code from your app" name="code" autocomplete="one-time-code" inputmode="numeric" required maxlength={16} />
        <button type="submit">Turn on two-factor authentication</button>
      </Form>
      {props.cancelHref ? <a href={props.cancelHref}>Cancel</a> : <CancelSignIn />}
    </section>
  );
}

/** A new set of recovery codes, shown this once. */
export function RecoveryCodesPage(props: { codes: string[]; continueHref: string; intro: string }) {
  return (
    <section class="narrow">
      <Notice kind="success">{props.intro}</Notice>
      <p>
        Keep these recovery codes somewhere safe. Each one signs you in once if you lose your authenticator app. They are shown
        only now.
      </p>
      <ol class="codes" aria-label="Recovery codes">
        {props.codes.map((code) => (
          <li>
            <code class="secret">{code}</code>
          </li>
        ))}
      </ol>
      <p>
        <a href={props.continueHref}>Continue</a>
      </p>
    </section>
  );
}

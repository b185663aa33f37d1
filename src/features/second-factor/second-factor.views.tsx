// Pages of the second factor: the two-factor step, the enrolment offer, the QR/secret page, the recovery codes.
import { raw } from 'hono/html';
import { OnceField } from '../auth/reveal.tsx';
import { CeremonyForm } from '../../http/ceremony.tsx';
import { Field, Form, Notice } from '../../http/views/components.tsx';

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

/** Which second factors the step offers: the account's passkeys, its authenticator app, and recovery codes always. */
export interface StepFactors {
  totp: boolean;
  passkeys: number;
}

/**
 * The two-factor step after the first factor (a password or SSO): a passkey, an authenticator code or a recovery code,
 * the holder's choice, on one page. An account without TOTP is not asked for an app's code it cannot have.
 */
export function TotpStepPage(props: { error?: string; factors: StepFactors }) {
  const { totp, passkeys } = props.factors;
  return (
    <section class="narrow">
      <p class="lead">
        {passkeys > 0 && totp
          ? 'Use your passkey or a code from your authenticator app to finish signing in.'
          : passkeys > 0
            ? 'Use your passkey to finish signing in.'
            : 'Enter the code from your authenticator app to finish signing in.'}
      </p>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {passkeys > 0 ? (
        <CeremonyForm
          kind="second-factor"
          id="passkey-step"
          action="/login/totp/passkey"
          options="/login/totp/passkey/options"
          unavailable={`Using a passkey needs JavaScript and a browser that supports passkeys. ${totp ? 'Enter a code from your authenticator app or a recovery code below.' : 'Enter one of your recovery codes below.'}`}
        >
          <button type="submit">Use your passkey</button>
        </CeremonyForm>
      ) : null}
      <Form action="/login/totp">
        {totp ? (
          <Field
            label="Authentication code"
            name="code"
            autocomplete="one-time-code"
            required
            maxlength={64}
            hint="The 6-digit code from your app, or one of your recovery codes (xxxxx-xxxxx-xxxxx)."
          />
        ) : (
          <Field
            label="Recovery code"
            name="code"
            autocomplete="one-time-code"
            required
            maxlength={64}
            hint="If you cannot use your passkey: one of the recovery codes you saved (xxxxx-xxxxx-xxxxx)."
          />
        )}
        <button type="submit" class={passkeys > 0 ? 'secondary' : undefined}>
          Verify
        </button>
      </Form>
      <CancelSignIn />
    </section>
  );
}

/**
 * Offered at the first sign-in (and after an admin re-enrolment): set up now, or skip. The password was typed moments
 * ago, so setting up does not ask for it again.
 */
export function EnrolOfferPage(props: { error?: string }) {
  return (
    <section class="narrow">
      <p class="lead">
        Protect your account with a second factor: a 6-digit code from an authenticator app, asked for after your
        password.
      </p>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <Form action="/login/enrol" id="enrol-start">
        <OnceField />
        <input type="hidden" name="action" value="start" />
        <button type="submit">Set up two-factor authentication</button>
      </Form>
      <Form action="/login/enrol" id="enrol-skip">
        <input type="hidden" name="action" value="skip" />
        <p class="hint">You can set it up later from your profile.</p>
        <button type="submit" class="secondary">
          Skip for now
        </button>
      </Form>
    </section>
  );
}

/** A TOTP key as people copy it: groups of four characters (apps ignore the spaces). */
export function groupKey(secret: string): string {
  return (secret.match(/.{1,4}/g) ?? []).join(' ');
}

/** The key of a started enrolment, shown once: as a QR code, as grouped text, and as an otpauth:// link. */
function EnrolKey(props: { svg: string; secret: string; uri: string }) {
  return (
    <>
      <p>Scan this code with your authenticator app, or enter the key by hand.</p>
      {/* qrSvg() checked this markup against the fixed shape qrcode emits; it carries no text from the request. */}
      <figure class="qr" aria-label="QR code of the set-up key">
        {raw(props.svg)}
      </figure>
      <dl class="facts">
        <dt>Set-up key</dt>
        <dd>
          <code class="secret totp-key" id="totp-secret">
            {groupKey(props.secret)}
          </code>
        </dd>
        <dt>On this device</dt>
        <dd>
          <a href={props.uri}>Open the set-up link in an authenticator app</a>
        </dd>
      </dl>
      <p class="hint">
        Time-based, SHA1, 6 digits, every 30 seconds. This key is shown only now: the page will not show it again.
      </p>
    </>
  );
}

/**
 * The confirming step of an enrolment: the key (only on the page after the start's redirect; `shown` is absent on a
 * reload, Back, or a wrong code) and the field for the first code. `restart` is how to begin again with a new key.
 */
export function EnrolSecretPage(props: {
  action: string;
  hidden?: Record<string, string>;
  shown?: { svg: string; secret: string; uri: string };
  error?: string;
  restart: { href: string } | { action: string; hidden: Record<string, string> };
  cancelHref?: string;
}) {
  const restart = props.restart;
  return (
    <section class="narrow">
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {props.shown ? (
        <EnrolKey {...props.shown} />
      ) : (
        <Notice kind="info">
          The set-up key was shown once and is not shown again. If you added it to your app, enter the app’s current
          code below; if not, start again with a new key.
        </Notice>
      )}
      <Form action={props.action} id="enrol-confirm">
        <OnceField />
        {Object.entries(props.hidden ?? {}).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <Field
          label="Code from your app"
          name="code"
          autocomplete="one-time-code"
          inputmode="numeric"
          required
          maxlength={16}
        />
        <button type="submit">Turn on two-factor authentication</button>
      </Form>
      {props.shown ? null : 'href' in restart ? (
        <p>
          <a href={restart.href}>Start again with a new key</a>
        </p>
      ) : (
        <Form action={restart.action} id="enrol-restart">
          <OnceField />
          {Object.entries(restart.hidden).map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <button type="submit" class="secondary">
            Start again with a new key
          </button>
        </Form>
      )}
      {props.cancelHref ? <a href={props.cancelHref}>Cancel</a> : <CancelSignIn />}
    </section>
  );
}

/**
 * A new set of recovery codes, shown this once (the page after the redirect), with a download of the same codes as a
 * text file; `codes` is absent when the page is reloaded or revisited.
 */
export function RecoveryCodesPage(props: { codes?: string[]; continueHref: string; intro: string }) {
  if (!props.codes) {
    return (
      <section class="narrow">
        <Notice kind="info">
          These recovery codes were shown once and are not shown again. If you did not keep them, generate a new set
          from your profile: that voids the old one.
        </Notice>
        <p>
          <a href={props.continueHref}>Continue</a>
        </p>
      </section>
    );
  }
  return (
    <section class="narrow">
      <Notice kind="success">{props.intro}</Notice>
      <p>
        Keep these recovery codes somewhere safe. Each one signs you in once if you lose your authenticator app or
        passkey. They are shown only now: this page will not show them again.
      </p>
      <ol class="codes" aria-label="Recovery codes">
        {props.codes.map((code) => (
          <li>
            <code class="secret">{code}</code>
          </li>
        ))}
      </ol>
      {/* The download posts back the codes this page holds: the server keeps no copy to hand out later. */}
      <Form action="/profile/recovery-codes/download" id="recovery-codes-download">
        {props.codes.map((code) => (
          <input type="hidden" name="code" value={code} />
        ))}
        <button type="submit" class="secondary">
          Download as text file
        </button>
      </Form>
      <p>
        <a href={props.continueHref}>Continue</a>
      </p>
    </section>
  );
}

// A write-only secret is never put back into a form after a refused submission, so the form asks for it again: a
// hidden marker says "a secret was given in the refused attempt" (it holds no secret), and a resubmission with the
// field blank is refused until the secret is typed again or the admin ticks the box that says to go on without it.
import { Checkbox } from './components.tsx';

/** The hidden marker's field name: present (value "1") when the refused attempt carried a secret. */
export const SECRET_RETRY_FIELD = 'secret_retry';
/** The checkbox's field name: "go on without the secret I was asked to enter again". */
export const SECRET_SKIP_FIELD = 'secret_skip';

/** What one submission says about its secret field. */
export interface SecretRetry {
  /** A secret is typed in this submission. */
  typed: boolean;
  /** The form was re-shown after a refused attempt that carried a secret. */
  marked: boolean;
  /** The admin chose to go on without it (the skip box, or a form's own "remove the secret" box). */
  skipped: boolean;
}

/** Reads a submission's secret field, marker and skip box; `cleared` is a form's own "remove the secret" box, which wins. */
export function readSecretRetry(form: URLSearchParams | undefined, field: string, cleared = false): SecretRetry {
  return {
    typed: !cleared && (form?.get(field) ?? '').trim() !== '',
    marked: form?.get(SECRET_RETRY_FIELD) === '1',
    skipped: cleared || (form?.has(SECRET_SKIP_FIELD) ?? false),
  };
}

/** True when this submission must be refused: a secret was given before, none now, and nobody chose to go without. */
export function owesSecret(r: SecretRetry): boolean {
  return r.marked && !r.typed && !r.skipped;
}

/** True when the form shown after this refused submission must ask for the secret again. */
export function asksSecretAgain(r: SecretRetry): boolean {
  return r.typed || owesSecret(r);
}

/** The message at the secret field when it must be entered again. */
export function secretAgainMessage(what: string, skipLabel: string): string {
  return `The ${what} was not kept because the form was refused. Enter it again, or tick "${skipLabel}".`;
}

/**
 * `errors` with the "enter it again" message at the secret field when the form asks for it again (an error of the
 * field's own, such as its length, is kept instead).
 */
export function withSecretAgain(errors: Record<string, string>, field: string, ask: boolean, message: string): Record<string, string> {
  return ask && errors[field] === undefined ? { ...errors, [field]: message } : errors;
}

/** The marker and the skip box, placed right after the secret field; nothing unless the form asks for the secret again. */
export function SecretRetryFields(props: { ask: boolean; skipLabel: string; hint?: string }) {
  if (!props.ask) return null;
  return (
    <>
      <input type="hidden" name={SECRET_RETRY_FIELD} value="1" />
      <Checkbox label={props.skipLabel} name={SECRET_SKIP_FIELD} hint={`${props.hint ?? ''} Only when the field above is left blank: a secret typed there is used.`.trim()} />
    </>
  );
}

// A write-only secret is never put back into a form after a refused submission, so the form asks for it again: a
// hidden marker says "a secret was given in the refused attempt" (it holds no secret), and a resubmission with the
// field blank is refused until the secret is typed again or the admin ticks the box that says to go on without it.
import { Checkbox } from './components.tsx';

/** The hidden marker's field name: present (value "1") when the refused attempt carried a secret. */
const SECRET_RETRY_FIELD = 'secret_retry';
/** The checkbox's field name: "go on without the secret I was asked to enter again". */
const SECRET_SKIP_FIELD = 'secret_skip';

/** What one submission means for its secret field. */
export interface SecretRetry {
  /** The form shown after this submission, if it is refused, asks for the secret again (one was typed, or is owed). */
  ask: boolean;
  /**
   * This submission must be refused: a secret was given in the refused attempt before, none now, and nobody chose to go
   * without.
   */
  owed: boolean;
}

/**
 * Reads a submission's secret `field`, marker and skip box. `cleared` is a form's own "remove the secret" box, which
 * wins over a typed value and counts as choosing to go without.
 */
export function secretRetry(form: URLSearchParams | undefined, field: string, cleared = false): SecretRetry {
  const typed = !cleared && (form?.get(field) ?? '').trim() !== '';
  const marked = form?.get(SECRET_RETRY_FIELD) === '1';
  const skipped = cleared || (form?.has(SECRET_SKIP_FIELD) ?? false);
  const owed = marked && !typed && !skipped;
  return { ask: typed || owed, owed };
}

/**
 * `errors` with "enter it again" at the secret `field` when the form asks for it again (`what` names the secret,
 * `skipLabel` is the box's label); an error of the field's own, such as its length, is kept instead.
 */
export function withSecretAgain(
  errors: Record<string, string>,
  secret: { field: string; ask: boolean; what: string; skipLabel: string },
): Record<string, string> {
  if (!secret.ask || errors[secret.field] !== undefined) return errors;
  return {
    ...errors,
    [secret.field]: `The ${secret.what} was not kept because the form was refused. Enter it again, or tick "${secret.skipLabel}".`,
  };
}

/**
 * The marker and the skip box, placed right after the secret field; nothing unless the form asks for the secret again.
 */
export function SecretRetryFields(props: { ask: boolean; skipLabel: string; hint?: string }) {
  if (!props.ask) return null;
  return (
    <>
      <input type="hidden" name={SECRET_RETRY_FIELD} value="1" />
      <Checkbox
        label={props.skipLabel}
        name={SECRET_SKIP_FIELD}
        hint={`${props.hint ?? ''} Only when the field above is left blank: a secret typed there is used.`.trim()}
      />
    </>
  );
}

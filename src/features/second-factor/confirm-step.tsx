// "Confirm it's you": the step shown before an act that hands out lasting access (minting an API token, new recovery
// codes, setting up the second factor, linking an SSO identity on the Profile; an admin invitation or a password reset
// link under Settings) when this session has not re-typed its password within the last 10 minutes. Every door posts
// it to a route that calls confirmIdentity() (one per-session limiter) and returns to the place that asked. Profile
// shows one ConfirmForm for all its acts (confirm.section.tsx); Settings a ConfirmStep in place of each act.
import type { ConfirmIdentityResult } from './reauth.service.ts';
import { lockedMessage } from '../auth/login.views.tsx';
import { Field, Form } from '../../http/views/components.tsx';

/** The notice after an act refused for want of a recent confirmation. */
export { CONFIRM_FIRST } from '../auth/reauth-window.ts';

/**
 * The confirm form alone, with id `id`, posting to `action` with the hidden `fields` that say where to return.
 * `withCode` when the account has an authenticator app, whose code also works.
 */
export function ConfirmForm(props: {
  id: string;
  action: string;
  withCode: boolean;
  errors?: Record<string, string>;
  fields?: Record<string, string>;
}) {
  return (
    <Form action={props.action} id={props.id} errors={props.errors}>
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <Field
        label={props.withCode ? 'Password or authenticator code' : 'Password'}
        name="secret"
        type="password"
        autocomplete="current-password"
        required
        hint={props.withCode ? 'Your password, or the current 6-digit code from your authenticator app.' : undefined}
      />
      <button type="submit">Confirm</button>
    </Form>
  );
}

/**
 * The step in place of one act (Settings: an admin invitation, a reset link): a heading, why it asks, and the confirm
 * form with id `<place>-confirm` posting to `action` with the hidden `fields` that say where to return.
 */
export function ConfirmStep(props: {
  place: string;
  withCode: boolean;
  why: string;
  action: string;
  errors?: Record<string, string>;
  fields?: Record<string, string>;
}) {
  return (
    <div class="confirm-step">
      <h3>Confirm it’s you</h3>
      <p>{props.why} Confirming lasts 10 minutes in this browser session.</p>
      <ConfirmForm
        id={`${props.place}-confirm`}
        action={props.action}
        withCode={props.withCode}
        errors={props.errors}
        fields={props.fields}
      />
    </div>
  );
}

/** The confirm form's error and status for a refused confirmation (`withCode` as for ConfirmStep). */
export function confirmRefusal(
  result: Exclude<ConfirmIdentityResult, { ok: true }>,
  withCode: boolean,
): { errors: { secret: string }; status: 401 | 429 } {
  if (result.reason === 'locked') return { errors: { secret: lockedMessage(result.retryAfterMs) }, status: 429 };
  return { errors: { secret: withCode ? 'That password or code is not right.' : 'Incorrect password.' }, status: 401 };
}

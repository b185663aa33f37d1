// "Confirm it's you": the step shown before an act that hands out lasting access (minting an API token, new recovery
// codes, setting up the second factor, linking an SSO identity on the Profile; an admin invitation or a password reset
// link under Settings) when this session has not re-typed its password within the last 10 minutes. Every door posts
// it to a route that calls confirmIdentity() (one per-session limiter) and returns to the place that asked.
import type { ConfirmIdentityResult } from '../auth/reauth.service.ts';
import { lockedMessage } from '../auth/second-factor.views.tsx';
import { Field, Form } from '../../http/views/components.tsx';

/** The Profile sections that can ask for it (POST /profile/reauth); the confirmation returns to the one that asked. */
export const CONFIRM_SECTIONS = ['tokens', 'second-factor', 'sso'] as const;
export type ConfirmSection = (typeof CONFIRM_SECTIONS)[number];

/** The notice after an act refused for want of a recent confirmation. */
export const CONFIRM_FIRST = 'Confirm it’s you first: your last confirmation is more than 10 minutes old.';

/**
 * The confirm form, with id `<place>-confirm`. By default it posts to /profile/reauth naming the Profile section
 * `place`; another door passes its own `action` and the hidden `fields` that say where to return. `withCode` when the
 * account has an authenticator app, whose code also works.
 */
export function ConfirmStep(props: {
  place: string;
  withCode: boolean;
  why: string;
  errors?: Record<string, string>;
  action?: string;
  fields?: Record<string, string>;
}) {
  const fields = props.fields ?? { section: props.place };
  return (
    <div class="confirm-step">
      <h3>Confirm it’s you</h3>
      <p>{props.why} Confirming lasts 10 minutes in this browser session.</p>
      <Form action={props.action ?? '/profile/reauth'} id={`${props.place}-confirm`} errors={props.errors}>
        {Object.entries(fields).map(([name, value]) => (
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

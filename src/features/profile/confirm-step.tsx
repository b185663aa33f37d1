// "Confirm it's you": the step a profile section shows before a powerful act (minting an API token, new recovery
// codes, setting up the second factor) when this session has not re-typed its password within the last 10 minutes.
import { Field, Form } from '../../http/views/components.tsx';

/** The sections that can ask for it; the confirmation returns to the one that asked. */
export const CONFIRM_SECTIONS = ['tokens', 'second-factor'] as const;
export type ConfirmSection = (typeof CONFIRM_SECTIONS)[number];

/** The confirm form of one section; `withCode` when the account has an authenticator app, whose code also works. */
export function ConfirmStep(props: { section: ConfirmSection; withCode: boolean; why: string; errors?: Record<string, string> }) {
  return (
    <div class="confirm-step">
      <h3>Confirm it’s you</h3>
      <p>{props.why} Confirming lasts 10 minutes in this browser session.</p>
      <Form action="/profile/reauth" id={`${props.section}-confirm`} errors={props.errors}>
        <input type="hidden" name="section" value={props.section} />
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

// The "New password" field of every form that replaces a password: the length rule stated once, then what follows.
import { Field } from '../../http/views/components.tsx';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.ts';

/** A labelled new-password input whose hint gives the length rule and `consequence` (what saving it does). */
export function NewPasswordField(props: { consequence: string }) {
  return (
    <Field
      label="New password"
      name="password"
      type="password"
      autocomplete="new-password"
      required
      hint={`${PASSWORD_MIN} to ${PASSWORD_MAX} characters. ${props.consequence}`}
    />
  );
}

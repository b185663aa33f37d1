// The "New password" field of every form that replaces a password, and the username and password of a new account
// (setup, joining by invitation): the length rules stated once.
import { Field } from '../../http/views/components.tsx';
import { PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX } from './passwords.ts';

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

/** The username and password of an account being created (the first administrator, or joining by invitation). */
export function NewAccountFields(props: { username?: string }) {
  return (
    <>
      <Field
        label="Username"
        name="username"
        value={props.username}
        autocomplete="username"
        required
        maxlength={USERNAME_MAX}
      />
      <Field
        label="Password"
        name="password"
        type="password"
        autocomplete="new-password"
        required
        hint={`${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`}
      />
    </>
  );
}

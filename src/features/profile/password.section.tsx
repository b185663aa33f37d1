// Profile section: change one's own password (the current one is required).
import { Field, Form } from '../../http/views/components.tsx';
import { NewPasswordField } from '../auth/new-password-field.tsx';
import type { ProfileSection } from '../../http/views/profile.tsx';

export const passwordSection: ProfileSection = {
  key: 'password',
  render: async (_deps, _c, feedback) => (
    <section>
      <h2>Password</h2>
      <Form
        action="/profile/password"
        id="password-change"
        errors={feedback?.form?.id === 'password-change' ? feedback.form.errors : undefined}
      >
        <Field label="Current password" name="current" type="password" autocomplete="current-password" required />
        <NewPasswordField consequence="Your other sessions are signed out." />
        <button type="submit">Change password</button>
      </Form>
    </section>
  ),
};

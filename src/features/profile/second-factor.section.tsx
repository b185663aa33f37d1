// Profile section: the second factor. Enrol when off; when on, its state, recovery codes left, and regeneration.
import { Field, Form } from '../../http/views/components.tsx';
import { RECOVERY_CODE_COUNT } from '../auth/recovery-codes.ts';
import { secondFactorState } from '../auth/second-factor.service.ts';
import type { ProfileSection } from './sections.ts';

export const secondFactorSection: ProfileSection = {
  key: 'second-factor',
  render: async (deps, c) => {
    const state = await secondFactorState(deps, c.get('session')!.account.id);
    if (!state.enabled) {
      return (
        <section>
          <h2>Two-factor authentication</h2>
          <p>
            Status: <span class="badge">off</span>. Add a 6-digit code from an authenticator app to every sign-in.
          </p>
          <Form action="/profile/totp/start">
            <Field label="Confirm password to set up" name="password" type="password" autocomplete="current-password" required />
            <button type="submit">Set up two-factor authentication</button>
          </Form>
        </section>
      );
    }
    return (
      <section>
        <h2>Two-factor authentication</h2>
        <p>
          Status: <span class="badge">on</span>. Recovery codes left:{' '}
          <strong class="recovery-left">{`${state.recoveryCodesLeft} of ${RECOVERY_CODE_COUNT}`}</strong>.
        </p>
        <Form action="/profile/recovery-codes">
          <Field
            label="Confirm password to regenerate"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            hint="A new set replaces the old one: the old codes stop working."
          />
          <button type="submit">Generate new recovery codes</button>
        </Form>
      </section>
    );
  },
};

// Profile section: the page's one "Confirm it's you" step. Until this session confirmed itself within the last 10
// minutes, it holds the only confirm form, and the sections whose acts need it (second factor, single sign-on, API
// tokens) show a ConfirmFirstHint (src/http/views/profile.tsx) linking here in place of their buttons; once confirmed
// it is gone (its "Confirmed" notice aside) and they show their acts. The rule itself stays in the services.
import { signedIn } from '../../http/env.ts';
import { recentlyConfirmed } from '../second-factor/reauth.service.ts';
import { ConfirmForm } from '../second-factor/confirm-step.tsx';
import type { ProfileSection } from '../../http/views/profile.tsx';

export const confirmSection: ProfileSection = {
  key: 'confirm',
  render: async (deps, c, feedback) => {
    const session = signedIn(c);
    if (await recentlyConfirmed(deps, session.idHash)) return null;
    const withCode = session.account.totp_enabled === 1;
    return (
      <section>
        <h2>Confirm it’s you</h2>
        <p>
          Setting up a second factor, new recovery codes, linking a sign-in provider and creating API tokens ask for
          your password{withCode ? ' (or an authenticator code)' : ''} again. Confirming lasts 10 minutes in this
          browser session.
        </p>
        <ConfirmForm
          id="confirm"
          action="/profile/reauth"
          withCode={withCode}
          errors={feedback?.form?.id === 'confirm' ? feedback.form.errors : undefined}
        />
      </section>
    );
  },
};

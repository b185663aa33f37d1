// Profile section: the second factor. Set up when off; when on, its state, recovery codes left, and new codes. Both
// acts need "Confirm it's you" (the page's one confirm step) within the last 10 minutes of this session first.
import { signedIn } from '../../http/env.ts';
import { OnceField } from '../auth/reveal.tsx';
import { Form } from '../../http/views/components.tsx';
import { recentlyConfirmed } from '../second-factor/reauth.service.ts';
import { RECOVERY_CODE_COUNT } from '../second-factor/recovery-codes.ts';
import { secondFactorState } from '../second-factor/second-factor.service.ts';
import { ConfirmFirstHint, type ProfileSection } from '../../http/views/profile.tsx';

export const secondFactorSection: ProfileSection = {
  key: 'second-factor',
  render: async (deps, c) => {
    const session = signedIn(c);
    const [state, confirmed] = await Promise.all([
      secondFactorState(deps, session.account.id),
      recentlyConfirmed(deps, session.idHash),
    ]);
    if (!state.enabled) {
      return (
        <section>
          <h2>Two-factor authentication</h2>
          <p>
            Status: <span class="badge">off</span>. Add a 6-digit code from an authenticator app to every sign-in.
          </p>
          {confirmed ? (
            <Form action="/profile/totp/start" id="totp-start">
              <OnceField />
              <button type="submit">Set up two-factor authentication</button>
            </Form>
          ) : (
            <ConfirmFirstHint act="set up two-factor authentication" />
          )}
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
        {confirmed ? (
          <Form action="/profile/recovery-codes" id="recovery-codes-new">
            <OnceField />
            <p class="hint">A new set replaces the old one: the old codes stop working.</p>
            <button type="submit">Generate new recovery codes</button>
          </Form>
        ) : (
          <>
            <p class="hint">A new set replaces the old one: the old codes stop working.</p>
            <ConfirmFirstHint act="generate new recovery codes" />
          </>
        )}
      </section>
    );
  },
};

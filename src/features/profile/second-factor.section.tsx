// Profile section: the second factor. Set up TOTP when off; when on (TOTP or a passkey), which factors, recovery codes
// left, and new codes (and TOTP set-up beside passkeys). These acts need "Confirm it's you" (the page's one confirm
// step) within the last 10 minutes of this session first.
import { signedIn } from '../../http/env.ts';
import { OnceField } from '../auth/reveal.tsx';
import { Form } from '../../http/views/components.tsx';
import { recentlyConfirmed } from '../second-factor/reauth.service.ts';
import { RECOVERY_CODE_COUNT } from '../second-factor/recovery-codes.ts';
import { describeFactors, hasSecondFactor } from '../second-factor/factors.ts';
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
    const { factors } = state;
    if (!hasSecondFactor(factors)) {
      return (
        <section>
          <h2>Two-factor authentication</h2>
          <p>
            Status: <span class="badge">off</span>. Add a 6-digit code from an authenticator app to every sign-in, or
            add a <a href="#profile-passkeys">passkey</a>.
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
          Status: <span class="badge">on</span> ({describeFactors(factors)}). Recovery codes left:{' '}
          <strong class="recovery-left">{`${state.recoveryCodesLeft} of ${RECOVERY_CODE_COUNT}`}</strong>.
        </p>
        {factors.totp ? null : confirmed ? (
          <Form action="/profile/totp/start" id="totp-start">
            <OnceField />
            <p class="hint">An authenticator app’s codes also work where a passkey cannot be used.</p>
            <button type="submit" class="secondary">
              Set up an authenticator app
            </button>
          </Form>
        ) : (
          <ConfirmFirstHint act="set up an authenticator app as well" />
        )}
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

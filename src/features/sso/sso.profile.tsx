// The Profile's single sign-on section: the caller's linked identities (Unlink) and a Link button per enabled provider,
// behind "Confirm it's you" (a linked identity signs in as the account): until this session confirmed itself within the
// last 10 minutes, the section points to the page's one confirm step instead of offering the buttons.
import { signedIn } from '../../http/env.ts';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import { ConfirmFirstHint, type ProfileSection } from '../../http/views/profile.tsx';
import { enabledProviders, identitiesOf } from './sso.providers.service.ts';
import { pick, SsoProfileView } from './sso.views.tsx';

/** Fixed outcomes of the link/unlink round-trips, selected by ?sso= on /profile. */
const NOTICES: Record<string, { kind: 'success' | 'error'; text: string }> = {
  linked: { kind: 'success', text: 'Identity linked. You can now sign in with it.' },
  already: { kind: 'success', text: 'This identity was already linked to your account.' },
  unlinked: { kind: 'success', text: 'Identity unlinked.' },
  unchanged: {
    kind: 'error',
    text: 'Nothing changed: that identity is not linked to your account (it may have been unlinked already).',
  },
};

/** The section; the profile page wraps it in #profile-sso. */
export const ssoProfileSection: ProfileSection = {
  key: 'sso',
  render: async (deps, c) => {
    const session = signedIn(c);
    const [identities, providers, confirmed] = await Promise.all([
      identitiesOf(deps, session.account.id),
      enabledProviders(deps),
      recentlyConfirmed(deps, session.idHash),
    ]);
    const notice = pick(NOTICES, c.req.query('sso'));
    const linked = new Set(identities.map((i) => i.provider_slug));
    if (confirmed || providers.every((p) => linked.has(p.slug)))
      return <SsoProfileView identities={identities} providers={providers} notice={notice} />;
    return (
      <>
        <SsoProfileView identities={identities} providers={[]} notice={notice} />
        <ConfirmFirstHint act="link a sign-in provider" />
      </>
    );
  },
};

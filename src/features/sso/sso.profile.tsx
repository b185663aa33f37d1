// The Profile's single sign-on section: the caller's linked identities (Unlink) and a Link button per enabled provider.
import type { ProfileSection } from '../profile/sections.ts';
import { enabledProviders, identitiesOf } from './sso.providers.service.ts';
import { pick, SsoProfileView } from './sso.views.tsx';

/** Fixed outcomes of the link/unlink round-trips, selected by ?sso= on /profile. */
const NOTICES: Record<string, { kind: 'success' | 'error'; text: string }> = {
  linked: { kind: 'success', text: 'Identity linked. You can now sign in with it.' },
  already: { kind: 'success', text: 'This identity was already linked to your account.' },
  unlinked: { kind: 'success', text: 'Identity unlinked.' },
  unchanged: { kind: 'error', text: 'Nothing changed: that identity is not linked to your account (it may have been unlinked already).' },
};

/** The section; the profile page wraps it in #profile-sso. */
export const ssoProfileSection: ProfileSection = {
  key: 'sso',
  render: async (deps, c) => {
    const accountId = c.get('session')!.account.id;
    const [identities, providers] = await Promise.all([identitiesOf(deps, accountId), enabledProviders(deps)]);
    return <SsoProfileView identities={identities} providers={providers} notice={pick(NOTICES, c.req.query('sso'))} />;
  },
};

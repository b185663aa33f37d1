// The Profile's single sign-on section: the caller's linked identities (Unlink) and a Link button per enabled provider.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { enabledProviders, identitiesOf } from './sso.providers.service.ts';
import { pick, SsoProfileView } from './sso.views.tsx';

/** Fixed outcomes of the link/unlink round-trips, selected by ?sso= on /profile. */
const NOTICES: Record<string, { kind: 'success' | 'error'; text: string }> = {
  linked: { kind: 'success', text: 'Identity linked. You can now sign in with it.' },
  already: { kind: 'success', text: 'This identity was already linked to your account.' },
  unlinked: { kind: 'success', text: 'Identity unlinked.' },
};

/** Same shape as the Profile page's sections (key + render). */
export const ssoProfileSection: { key: string; render(deps: Deps, c: Ctx): Promise<Child> } = {
  key: 'sso',
  render: async (deps, c) => {
    const accountId = c.get('session')!.account.id;
    const [identities, providers] = await Promise.all([identitiesOf(deps, accountId), enabledProviders(deps)]);
    return <SsoProfileView identities={identities} providers={providers} notice={pick(NOTICES, c.req.query('sso'))} />;
  },
};

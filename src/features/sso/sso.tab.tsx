// The Settings tab "Single sign-on": providers (secret as a set/none badge), callback URLs, linked identities.
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { externalOrigin } from '../../http/request.ts';
import type { SettingsTab } from '../../http/views/settings.ts';
import { endSessionStates } from './sso.logout.service.ts';
import { ssoOverview } from './sso.providers.service.ts';
import { pick, SsoTabView, type TabFormState } from './sso.views.tsx';

/** Fixed notices selected by ?notice=, so no text is reflected from the URL. */
const NOTICES: Record<string, string> = {
  created: 'Provider declared. Register its callback URLs at the provider.',
  'created-unchecked':
    'Declared without checking discovery: sign-in with this provider fails until svc can reach it. Register its callback URLs at the provider.',
  updated: 'Provider saved.',
  'updated-unchecked': 'Saved without checking discovery: sign-in with this provider fails until svc can reach it.',
  'secret-set': 'Client secret saved.',
  'secret-cleared': 'Client secret removed: this is now a public client.',
  'secret-kept': 'Client secret left unchanged.',
  deleted: 'Provider and its linked identities deleted.',
  gone: 'That provider no longer exists.',
  'identity-removed': 'Linked identity removed. The account stays.',
};

/**
 * After an issuer change: how many bindings went with the old issuer (`?removed=`, digits only, never reflected as
 * text).
 */
function issuerChangedNotice(removedParam: string | undefined): string {
  const removed = removedParam !== undefined && /^\d{1,9}$/.test(removedParam) ? Number(removedParam) : undefined;
  const what =
    removed === undefined
      ? 'the identities linked through it were removed'
      : removed === 0
        ? 'no identity was linked through it'
        : `${removed} linked ${removed === 1 ? 'identity was' : 'identities were'} removed`;
  return `Provider saved. Its issuer changed, so ${what}: an identity at the old issuer is not the same person as one at the new issuer. Each person links their identity again from their Profile.`;
}

/** The notice selected by ?notice= (and ?removed=). */
function noticeFor(c: Ctx): string | undefined {
  const key = c.req.query('notice');
  return key === 'issuer-changed' ? issuerChangedNotice(c.req.query('removed')) : pick(NOTICES, key);
}

/** Renders the tab body, optionally with a failed form's errors and an error banner. */
export async function ssoTabBody(deps: Deps, c: Ctx, extra: { state?: TabFormState; error?: string } = {}) {
  const [{ providers, identities }, endSessions] = await Promise.all([ssoOverview(deps), endSessionStates(deps)]);
  return (
    <SsoTabView
      origin={externalOrigin(c, deps.config)}
      providers={providers}
      endSessions={endSessions}
      identities={identities}
      notice={extra.state || extra.error ? undefined : noticeFor(c)}
      error={extra.error}
      state={extra.state}
    />
  );
}

export const ssoTab: SettingsTab = {
  key: 'sso',
  label: 'Single sign-on',
  render: (deps, c) => ssoTabBody(deps, c),
};

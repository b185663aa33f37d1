// The Settings tab "Single sign-on": providers (secret as a set/none badge), callback URLs, linked identities.
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { externalOrigin } from '../../http/request.ts';
import type { SettingsTab } from '../../http/views/settings.ts';
import { endSessionStates } from './sso.logout.service.ts';
import { ssoOverview } from './sso.providers.service.ts';
import type { TabFormState } from './sso.provider-panel.tsx';
import { pick, SsoTabView } from './sso.views.tsx';

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

/** A count from the query (`?removed=`, `?ended=`): digits only, never reflected as text; undefined otherwise. */
function countParam(param: string | undefined): number | undefined {
  return param !== undefined && /^\d{1,9}$/.test(param) ? Number(param) : undefined;
}

/** After an issuer change: how many bindings went with the old issuer (`?removed=`). */
function issuerChangedNotice(removedParam: string | undefined): string {
  const removed = countParam(removedParam);
  const what =
    removed === undefined
      ? 'the identities linked through it were removed'
      : removed === 0
        ? 'no identity was linked through it'
        : `${removed} linked ${removed === 1 ? 'identity was' : 'identities were'} removed`;
  return `Provider saved. Its issuer changed, so ${what}: an identity at the old issuer is not the same person as one at the new issuer. Each person links their identity again from their Profile.`;
}

/** The notices of a provider's save, which may say how many sessions it ended. */
const SAVED_NOTICES = ['updated', 'updated-unchecked', 'issuer-changed'];

/** After a save that disabled the provider or changed its issuer or client id: how many sessions ended (`?ended=`). */
function endedSessionsNotice(endedParam: string | undefined): string {
  const ended = countParam(endedParam);
  if (ended === undefined || ended === 0) return '';
  return ` ${ended} ${ended === 1 ? 'session' : 'sessions'} signed in through it ended.`;
}

/** The notice selected by ?notice= (and ?removed=, ?ended=). */
function noticeFor(c: Ctx): string | undefined {
  const key = c.req.query('notice');
  const notice = key === 'issuer-changed' ? issuerChangedNotice(c.req.query('removed')) : pick(NOTICES, key);
  if (notice === undefined || !SAVED_NOTICES.includes(key!)) return notice;
  return `${notice}${endedSessionsNotice(c.req.query('ended'))}`;
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

// The team tab of /settings (the default tab): accounts, roles, invitations.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import type { SettingsTab } from '../settings/tabs.ts';
import type { MintedInvitation } from './invitations.service.ts';
import { loadTeam } from './team.service.ts';
import { TEAM_NOTICES, TeamTab } from './team.views.tsx';

/** Renders the tab body, with an in-band error or a freshly minted invitation when a POST asks for it. */
export async function renderTeamTab(deps: Deps, c: Ctx, extra: { error?: string; minted?: MintedInvitation } = {}): Promise<Child> {
  const key = c.req.query('notice') ?? '';
  const notice = extra.error || extra.minted || !Object.hasOwn(TEAM_NOTICES, key) ? undefined : TEAM_NOTICES[key];
  const team = await loadTeam(deps);
  return <TeamTab team={team} selfId={c.get('session')!.account.id} notice={notice} {...extra} />;
}

export const teamTab: SettingsTab = {
  key: 'team',
  label: 'Team',
  render: (deps, c) => renderTeamTab(deps, c),
};

// The team tab of /settings (the default tab): accounts, roles, invitations.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { revealNow } from '../../http/reveal.tsx';
import type { SettingsTab } from '../settings/tabs.ts';
import type { MintedInvitation } from './invitations.service.ts';
import { loadTeam } from './team.service.ts';
import { TEAM_NOTICES, TeamTab, type InviteFormState } from './team.views.tsx';

/** The reveal kind of a minted invitation's join link, held for the page after the mint's redirect. */
export const INVITATION_REVEAL = 'invitation';

/** Where the mint redirects: the team tab that shows the join link once. */
export const INVITATION_REVEAL_PATH = '/settings?tab=team&reveal=invitation#invite-result';

/**
 * Renders the tab body, with an in-band error or the invitation form's errors when a POST asks for it. On the page
 * after a mint's redirect (`reveal=invitation`) the held join link is taken: shown this once, never again.
 */
export async function renderTeamTab(deps: Deps, c: Ctx, extra: { error?: string; invite?: InviteFormState } = {}): Promise<Child> {
  const key = c.req.query('notice') ?? '';
  const notice = extra.error || extra.invite || !Object.hasOwn(TEAM_NOTICES, key) ? undefined : TEAM_NOTICES[key];
  const revealing = !extra.error && !extra.invite && c.req.query('reveal') === 'invitation';
  const held = revealing ? await revealNow(c, INVITATION_REVEAL) : undefined;
  const minted = held === undefined ? undefined : (JSON.parse(held) as MintedInvitation);
  const team = await loadTeam(deps);
  return <TeamTab team={team} selfId={c.get('session')!.account.id} notice={notice} minted={minted} mintedGone={revealing && !minted} {...extra} />;
}

export const teamTab: SettingsTab = {
  key: 'team',
  label: 'Team',
  render: (deps, c) => renderTeamTab(deps, c),
};

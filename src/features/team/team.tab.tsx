// The team tab of /settings (the default tab): accounts, roles, invitations.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import { signedIn, type Ctx } from '../../http/env.ts';
import { revealNow } from '../auth/reveal.tsx';
import { recentlyConfirmed } from '../auth/reauth-window.ts';
import type { SettingsTab } from '../../http/views/settings.ts';
import type { MintedInvitation } from './invitations.service.ts';
import { loadTeam } from './team.service.ts';
import { TEAM_NOTICES, TeamTab, type InviteFormState } from './team.views.tsx';

/** What a POST asks the tab to show in-band: an error, the invitation form's errors, or the confirm form's errors. */
export interface TeamTabExtra {
  error?: string;
  invite?: InviteFormState;
  confirmErrors?: Record<string, string>;
}

/** The reveal kind of a minted invitation's join link, held for the page after the mint's redirect. */
export const INVITATION_REVEAL = 'invitation';

/** Where the mint redirects: the team tab that shows the join link once. */
export const INVITATION_REVEAL_PATH = '/settings?tab=team&reveal=invitation#invite-result';

/**
 * Renders the tab body, with an in-band error or a form's errors when a POST asks for it. On the page after a mint's
 * redirect (`reveal=invitation`) the held join link is taken: shown this once, never again. Until this session
 * confirmed itself within 10 minutes, the invitation form asks "Confirm it's you" before offering the admin role.
 */
export async function renderTeamTab(deps: Deps, c: Ctx, extra: TeamTabExtra = {}): Promise<Child> {
  const { confirmErrors, ...inBand } = extra;
  const session = signedIn(c);
  const answered = inBand.error || inBand.invite || confirmErrors;
  const key = c.req.query('notice') ?? '';
  const notice = answered || !Object.hasOwn(TEAM_NOTICES, key) ? undefined : TEAM_NOTICES[key];
  const revealing = !answered && c.req.query('reveal') === 'invitation';
  const held = revealing ? await revealNow(c, INVITATION_REVEAL) : undefined;
  const minted = held === undefined ? undefined : (JSON.parse(held) as MintedInvitation);
  const [team, confirmed] = await Promise.all([loadTeam(deps), recentlyConfirmed(deps, session.idHash)]);
  const confirm = confirmed ? undefined : { withCode: session.account.totp_enabled === 1, errors: confirmErrors };
  return (
    <TeamTab
      team={team}
      selfId={session.account.id}
      notice={notice}
      minted={minted}
      mintedGone={revealing && !minted}
      confirm={confirm}
      {...inBand}
    />
  );
}

export const teamTab: SettingsTab = {
  key: 'team',
  label: 'Team',
  render: (deps, c) => renderTeamTab(deps, c),
};

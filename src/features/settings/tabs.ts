// The settings screen's tabs. Each feature registers its tab here; the frame renders them in this order.
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { channelsTab } from '../channels/channels.tab.tsx';
import { teamTab } from '../team/team.tab.tsx';
import { ssoTab } from '../sso/sso.tab.tsx';
import { auditTab } from './audit.tab.tsx';

/** One tab of /settings: its key in ?tab=, its label, and what it renders. */
export interface SettingsTab {
  key: string;
  label: string;
  render(deps: Deps, c: Ctx): Promise<Child>;
}

/** All tabs, in display order; the first is the default. */
export const settingsTabs: SettingsTab[] = [teamTab, ssoTab, channelsTab, auditTab];

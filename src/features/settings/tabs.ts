// The settings screen's tabs, the one place that lists them: each is built by its feature against the interface in
// src/http/views/settings.ts, and the frame renders them in this order.
import type { SettingsTab } from '../../http/views/settings.ts';
import { deliveriesTab } from '../delivery/deliveries.tab.tsx';
import { channelsTab } from '../channels/channels.tab.tsx';
import { teamTab } from '../team/team.tab.tsx';
import { ssoTab } from '../sso/sso.tab.tsx';
import { auditTab } from './audit.tab.tsx';

/** All tabs, in display order; the first is the default. */
export const settingsTabs: SettingsTab[] = [teamTab, ssoTab, channelsTab, deliveriesTab, auditTab];

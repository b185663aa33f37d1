// The Deliveries settings tab: dead letters and cancelled deliveries, each re-sendable by an admin.
import type { SettingsTab } from '../settings/tabs.ts';
import { undeliveredDeliveries } from './deliveries-view.service.ts';
import { UndeliveredList } from './delivery.views.tsx';

const NOTICES: Record<string, string> = { resent: 'Re-sent: the delivery is pending again with a fresh set of attempts.' };

/** Settings → Deliveries (admins): what was not delivered, and the re-send button. */
export const deliveriesTab: SettingsTab = {
  key: 'deliveries',
  label: 'Deliveries',
  render: async (deps, c) => <UndeliveredList rows={await undeliveredDeliveries(deps)} notice={NOTICES[c.req.query('notice') ?? '']} />,
};

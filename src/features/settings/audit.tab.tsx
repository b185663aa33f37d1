// The audit tab: svc keeps no audit-log event stream, so it is empty by design.
import type { SettingsTab } from '../../http/views/settings.ts';

export const auditTab: SettingsTab = {
  key: 'audit',
  label: 'Audit',
  render: async () => (
    <section>
      <h2>Audit</h2>
      <p class="empty">No audit log is kept: administrative acts are not recorded as events.</p>
    </section>
  ),
};

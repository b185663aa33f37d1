// The Deliveries settings tab: every delivery, filtered by state and channel, each undelivered one re-sendable.
import type { Ctx } from '../../http/env.ts';
import { parsePageNumber } from '../../http/query.ts';
import { isId } from '../../http/text.ts';
import { Notice } from '../../http/views/components.tsx';
import type { SettingsTab } from '../../http/views/settings.ts';
import { deliveriesPage } from './deliveries-view.service.ts';
import { DeliveriesTabView, STATE_FILTERS } from './deliveries-list.views.tsx';
import { resendNotice } from './resend-notice.tsx';
import type { DeliveryFilter } from './deliveries.repo.ts';

/** The filter a query names; an unknown state or a malformed channel id is no filter. */
function filterOf(c: Ctx): DeliveryFilter {
  const state = STATE_FILTERS.find(([s]) => s === c.req.query('state'))?.[0];
  const channel = c.req.query('channel');
  return { state, channelId: channel && isId(channel) ? channel : undefined };
}

/** The banner after a redirect: a channel-wide re-send with the count actually re-queued, or a gone channel. */
function notice(c: Ctx) {
  const code = c.req.query('notice');
  if (code === 'resent-all') {
    const raw = c.req.query('count') ?? '';
    const n = /^\d{1,7}$/.test(raw) ? Number(raw) : 0;
    if (n === 0)
      return <Notice kind="info">Nothing was re-sent: no dead-lettered delivery of that channel was waiting.</Notice>;
    return (
      <Notice kind="success">
        Re-sent {n} dead-lettered {n === 1 ? 'delivery' : 'deliveries'}: pending again with a fresh set of attempts.
      </Notice>
    );
  }
  if (code === 'gone') return <Notice kind="info">That channel no longer exists.</Notice>;
  return null;
}

/** Settings → Deliveries (admins). */
export const deliveriesTab: SettingsTab = {
  key: 'deliveries',
  label: 'Deliveries',
  render: async (deps, c) => (
    <DeliveriesTabView
      p={await deliveriesPage(deps, filterOf(c), parsePageNumber(c.req.query('page')))}
      notice={notice(c) ?? (await resendNotice(deps, c, true))}
    />
  ),
};

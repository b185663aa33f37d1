// Where a message was delivered: per channel, delivered, pending or dead-lettered (SPEC 6.7).
import { Time } from '../../http/views/components.tsx';
import { channelLabel } from '../channels/channel-label.ts';
import type { DeliveryStateCounts, DeliveryStatusRow } from './delivery-status.repo.ts';

const STATE_TEXT: Record<DeliveryStatusRow['state'], string> = {
  pending: 'pending',
  delivered: 'delivered',
  dead: 'dead-lettered (undelivered)',
  cancelled: 'cancelled (channel deleted)',
};

/** The delivery list of one message. Channel URLs and error texts are shown to administrators only. */
export function DeliveryStatus(props: { rows: DeliveryStatusRow[]; counts: DeliveryStateCounts; isAdmin: boolean }) {
  const c = props.counts;
  const total = c.pending + c.delivered + c.dead + c.cancelled;
  if (total === 0) {
    return <p class="empty">Kept in the store only: no enabled channel subscribed to this message's class when it was emitted.</p>;
  }
  return (
    <>
      <p class="delivery-summary">
        {total} {total === 1 ? 'channel' : 'channels'}: {c.delivered} delivered, {c.pending} pending, {c.dead} dead-lettered
        {c.cancelled > 0 ? `, ${c.cancelled} cancelled` : ''}.
      </p>
      <table class="deliveries">
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">When</th>
            {props.isAdmin ? <th scope="col">Last error</th> : null}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((d) => (
            <tr class={`delivery state-${d.state}`}>
              <td>{channelLabel({ id: d.channelId, url: d.channelUrl }, props.isAdmin)}</td>
              <td>{STATE_TEXT[d.state]}</td>
              <td>{d.attempts}</td>
              <td>
                {d.state === 'delivered' ? (
                  <Time at={d.deliveredAt} />
                ) : d.state === 'pending' ? (
                  <>
                    next attempt <Time at={d.nextAttemptAt} />
                  </>
                ) : (
                  <Time at={d.updatedAt} />
                )}
              </td>
              {props.isAdmin ? <td>{d.lastError ?? '—'}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
      {props.rows.length < total ? <p class="hint">Showing the first {props.rows.length} of {total}, dead-lettered first.</p> : null}
    </>
  );
}

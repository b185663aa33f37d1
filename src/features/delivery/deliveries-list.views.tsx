// The admin's Deliveries list: state and channel filters (links and a GET form, no script), rows linked to their
// message and classed by state, paging that keeps the filters, and the channel-wide "re-send all dead letters".
import type { Child } from 'hono/jsx';
import { Form, Select, StackedTable, Time } from '../../http/views/components.tsx';
import type { DeliveriesTable } from '../../db/schema.ts';
import type { DeliveriesPage, DeliveryRow } from './deliveries-view.service.ts';
import type { DeliveryFilter } from './deliveries.repo.ts';
import { ResendForm, StateLine } from './delivery.views.tsx';

/** The filter links' words, in the order shown. */
export const STATE_FILTERS: [DeliveriesTable['state'], string][] = [
  ['pending', 'Pending'],
  ['delivered', 'Delivered'],
  ['dead', 'Dead-lettered'],
  ['cancelled', 'Cancelled'],
];

/** The list's address for a filter and page; the empty parts are left out. */
export function deliveriesHref(filter: DeliveryFilter, page = 1): string {
  const q = new URLSearchParams({ tab: 'deliveries' });
  if (filter.state) q.set('state', filter.state);
  if (filter.channelId) q.set('channel', filter.channelId);
  if (page > 1) q.set('page', String(page));
  return `/settings?${q}`;
}

/** The confirmation step's address for re-sending a channel's dead letters. */
export const resendAllHref = (channelId: string) =>
  `/settings/deliveries/resend-all?channel=${encodeURIComponent(channelId)}`;

function StateFilter(props: { filter: DeliveryFilter }) {
  const f = props.filter;
  const links: [DeliveriesTable['state'] | undefined, string][] = [[undefined, 'All states'], ...STATE_FILTERS];
  return (
    <nav class="filter-links" aria-label="Filter by state">
      <ul>
        {links.map(([state, words]) => (
          <li>
            <a href={deliveriesHref({ ...f, state })} aria-current={f.state === state ? 'page' : undefined}>
              {words}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function ChannelFilter(props: { filter: DeliveryFilter; channels: { id: string; url: string }[] }) {
  const options: [string, string][] = [
    ['', 'All channels'],
    ...props.channels.map((c): [string, string] => [c.id, c.url]),
  ];
  if (props.filter.channelId && !props.channels.some((c) => c.id === props.filter.channelId))
    options.push([props.filter.channelId, 'a deleted channel']);
  return (
    <form method="get" action="/settings" class="filter-form">
      <input type="hidden" name="tab" value="deliveries" />
      {props.filter.state ? <input type="hidden" name="state" value={props.filter.state} /> : null}
      <Select label="Channel" name="channel" options={options} value={props.filter.channelId ?? ''} />
      <button type="submit" class="secondary">
        Show
      </button>
    </form>
  );
}

/** With a channel chosen: its dead letters waiting, and the way to re-send them all (after a confirmation step). */
function ResendAllOffer(props: { chosen: NonNullable<DeliveriesPage['chosen']> }) {
  const { channel, deadLetters } = props.chosen;
  if (!channel || deadLetters === 0) return null;
  const what = `${deadLetters} dead-lettered ${deadLetters === 1 ? 'delivery' : 'deliveries'}`;
  return (
    <div class="resend-all-offer">
      <p>
        {what} to <code>{channel.url}</code> {deadLetters === 1 ? 'is' : 'are'} waiting.
        {channel.enabled
          ? ' Once its receiver is fixed, re-send them in one go.'
          : ' Enable the channel before re-sending them.'}
      </p>
      {channel.enabled ? (
        <a class="button secondary" href={resendAllHref(channel.id)}>
          Re-send all {deadLetters}…
        </a>
      ) : null}
    </div>
  );
}

function Row(props: { r: DeliveryRow; back: string }) {
  const r = props.r;
  return (
    <tr class={`delivery state-${r.state}`}>
      <td>
        <a href={`/messages/${encodeURIComponent(r.messageId)}`}>{r.headline}</a>
      </td>
      <td>
        <span class="channel">{r.channel.url ?? 'a deleted channel'}</span>
      </td>
      <td>
        <StateLine d={r} showErrors />
      </td>
      <td>
        <span class="cell-label">Last change: </span>
        <Time at={r.at} />
      </td>
      <td>{r.resendable ? <ResendForm deliveryId={r.id} back={props.back} /> : null}</td>
    </tr>
  );
}

function Pager(props: { p: DeliveriesPage }) {
  const { page, hasNext, filter } = props.p;
  if (page === 1 && !hasNext) return null;
  return (
    <nav class="pager" aria-label="Delivery pages">
      {page > 1 ? <a href={deliveriesHref(filter, page - 1)}>Newer deliveries</a> : null}
      <span>Page {page}</span>
      {hasNext ? <a href={deliveriesHref(filter, page + 1)}>Older deliveries</a> : null}
    </nav>
  );
}

/** Settings → Deliveries: every delivery, most recently changed first, filtered by state and channel. */
export function DeliveriesTabView(props: { p: DeliveriesPage; notice?: Child }) {
  const p = props.p;
  const filtered = p.filter.state !== undefined || p.filter.channelId !== undefined;
  return (
    <section class="deliveries-list">
      <h2>Deliveries</h2>
      {props.notice}
      <p class="hint">
        Every copy of a message sent to a channel. A delivery is dead-lettered after five failed attempts, or not sent
        when its channel was disabled or deleted. Re-sending posts the same message (same body, same message id) to the
        same channel with a fresh set of attempts.
      </p>
      <div class="filters">
        <StateFilter filter={p.filter} />
        <ChannelFilter filter={p.filter} channels={p.channels} />
      </div>
      {p.chosen ? <ResendAllOffer chosen={p.chosen} /> : null}
      {p.rows.length === 0 ? (
        <p class="empty">
          {filtered ? 'No delivery matches these filters.' : 'No message has been sent to a channel yet.'}
        </p>
      ) : (
        <StackedTable class="deliveries" columns={['Message', 'Channel', 'State', 'Last change', 'Action']}>
          {p.rows.map((r) => (
            <Row r={r} back={deliveriesHref(p.filter, p.page)} />
          ))}
        </StackedTable>
      )}
      <Pager p={p} />
    </section>
  );
}

/** The confirmation step of "re-send all": the count and the channel, then the one button that acts. */
export function ResendAllConfirm(props: { channel: { id: string; url: string; enabled: boolean }; count: number }) {
  const { channel, count } = props;
  const back = deliveriesHref({ channelId: channel.id, state: 'dead' });
  if (!channel.enabled || count === 0) {
    return (
      <section class="confirm">
        <h2>Nothing to re-send</h2>
        <p>
          {channel.enabled ? 'No dead-lettered delivery to ' : 'The channel '}
          <code>{channel.url}</code>
          {channel.enabled ? ' is waiting.' : ' is disabled. Enable it first, then re-send its dead letters.'}
        </p>
        <a href={back}>Back to the deliveries</a>
      </section>
    );
  }
  return (
    <section class="confirm">
      <h2>
        Re-send {count} dead-lettered {count === 1 ? 'delivery' : 'deliveries'} to <code>{channel.url}</code>?
      </h2>
      <p>
        Each is posted again with the same body and message id and a fresh set of five attempts. Receivers that already
        processed one de-duplicate it by its message id.
      </p>
      <div class="actions">
        <Form action="/settings/deliveries/resend-all" class="inline">
          <input type="hidden" name="channel" value={channel.id} />
          <button type="submit">
            Re-send {count} {count === 1 ? 'delivery' : 'deliveries'}
          </button>
        </Form>
        <a href={back}>Cancel</a>
      </div>
    </section>
  );
}

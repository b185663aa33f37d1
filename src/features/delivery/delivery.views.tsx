// What the store shows about deliveries: per channel on a message, and the pieces the admin's list reuses.
import { Form, Notice, StackedTable, Time } from '../../http/views/components.tsx';
import { channelLabel } from './channel-label.ts';
import type { AttemptView, DeliveryView, MessageDeliveriesView } from './deliveries-view.service.ts';
import { wordsOf } from '../refusals.ts';
import { RESEND_REFUSALS } from './resend.refusals.ts';
import type { ResendRefusal } from './resend.service.ts';

/** What a single re-send did, as the page it returned to reads it back. */
export type ResendOutcome =
  | { ok: true; channel?: { id: string | null; url: string | null } }
  | { ok: false; reason: ResendRefusal };

/**
 * The banner on the page a single re-send returned to: the channel the new delivery is queued for (named by
 * channelLabel, so only admins read its URL; undefined when the new row is gone), or why nothing was queued.
 */
export function ResendNotice(props: { outcome: ResendOutcome; showUrl: boolean }) {
  const o = props.outcome;
  if (!o.ok) return <Notice kind="error">Not re-sent: {wordsOf(RESEND_REFUSALS[o.reason], undefined)}</Notice>;
  return (
    <Notice kind="success">
      Re-sent: a new delivery
      {o.channel ? (
        <>
          {' '}
          to <span class="channel">{channelLabel(o.channel, props.showUrl)}</span>
        </>
      ) : null}{' '}
      is queued, with a fresh set of attempts.
    </Notice>
  );
}

/** The re-send button for one undelivered delivery (admins only; the route is under /settings). */
export function ResendForm(props: { deliveryId: string; back?: string }) {
  return (
    <Form action="/settings/deliveries/resend" class="inline">
      <input type="hidden" name="delivery" value={props.deliveryId} />
      {props.back ? <input type="hidden" name="back" value={props.back} /> : null}
      <button type="submit" class="secondary">
        Re-send
      </button>
    </Form>
  );
}

/** Why a delivery was cancelled, which viewers may see; a row cancelled before 0011 may carry an error instead. */
const CANCEL_REASONS = new Set(['channel deleted', 'channel disabled']);

/** The fields a delivery's state line reads. */
type StateFields = Pick<
  DeliveryView,
  'state' | 'attempts' | 'maxAttempts' | 'nextAttemptAt' | 'deliveredAt' | 'lastError' | 'superseded'
>;

/** A delivery's state in words, in a span classed by state (the stylesheet colours it; the words carry the meaning). */
export function StateLine(props: { d: StateFields; showErrors: boolean }) {
  const d = { ...props.d, lastError: props.showErrors ? props.d.lastError : null };
  const note = d.superseded ? ' (re-sent: see the later row)' : '';
  switch (d.state) {
    case 'delivered':
      return (
        <span class="state delivered">
          Delivered <Time at={d.deliveredAt} />
        </span>
      );
    case 'pending':
      return (
        <span class="state pending">
          Pending: {d.attempts} of {d.maxAttempts} attempts made; {d.attempts === 0 ? 'first' : 'next'} attempt{' '}
          <Time at={d.nextAttemptAt} />
        </span>
      );
    case 'dead':
      return (
        <span class="state dead">
          Dead-lettered after {d.attempts} attempts{d.lastError ? `; last error: ${d.lastError}` : ''}
          {note}
        </span>
      );
    case 'cancelled':
      return (
        <span class="state cancelled">
          Not sent:{' '}
          {(props.showErrors || CANCEL_REASONS.has(props.d.lastError ?? '') ? props.d.lastError : null) ?? 'cancelled'}
          {note}
        </span>
      );
  }
}

/**
 * One attempt: its start and verdict (with the HTTP status when delivered) for everyone; for admins also how long it
 * took, the error text and the start of the receiver's answer (escaped text; it may quote the channel's own content).
 */
function Attempt(props: { a: AttemptView; isAdmin: boolean }) {
  const a = props.a;
  if (!props.isAdmin) {
    return (
      <li>
        <Time at={a.startedAt} />: {a.verdict === 'delivered' ? `delivered (HTTP ${a.statusCode})` : 'failed'}
      </li>
    );
  }
  return (
    <li>
      <Time at={a.startedAt} />:{' '}
      {a.verdict === 'delivered' ? `delivered (HTTP ${a.statusCode})` : `failed: ${a.error ?? 'unknown error'}`}
      <span class="duration"> in {a.durationMs} ms</span>
      {a.excerpt ? (
        // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the excerpt scrolls, so it takes keyboard focus and needs a name
        <pre class="excerpt" tabindex={0} aria-label={`Receiver's answer to attempt ${a.attemptNo}`}>
          {a.excerpt}
        </pre>
      ) : null}
    </li>
  );
}

/**
 * A message's delivery state per channel with each attempt's verdict. The message detail page renders it;
 * for `isAdmin` it names channels by URL and adds a re-send button to undelivered rows, returning to `back`.
 * Others see an opaque channel label (a channel URL can itself be the credential: channel-label.ts) and each verdict
 * without the error text, duration or response excerpt.
 */
export function MessageDeliveries(props: { deliveries: MessageDeliveriesView; isAdmin: boolean; back?: string }) {
  const c = props.deliveries.counts;
  const total = c.delivered + c.pending + c.dead + c.cancelled;
  const rows = props.deliveries.rows;
  return (
    <section class="deliveries" aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries</h2>
      {total === 0 ? (
        <p class="empty">
          No enabled channel took this message's class when it was emitted, so it was not sent anywhere.
        </p>
      ) : (
        <p class="delivery-summary">
          {c.delivered} delivered, {c.pending} pending, {c.dead} dead-lettered
          {c.cancelled > 0 ? `, ${c.cancelled} not sent` : ''}.
          {rows.length < total ? ` Showing ${rows.length} of ${total}, undelivered first.` : ''}
        </p>
      )}
      {rows.length === 0 ? null : (
        <StackedTable
          class="message-deliveries"
          columns={['Channel', 'State', 'Attempts', props.isAdmin ? 'Action' : null]}
        >
          {rows.map((d) => (
            <tr class={`delivery state-${d.state}`}>
              <td>
                <span class="channel">{channelLabel(d.channel, props.isAdmin)}</span>
              </td>
              <td>
                <StateLine d={d} showErrors={props.isAdmin} />
              </td>
              <td>
                {d.attemptList.length === 0 ? (
                  <span class="empty">none yet</span>
                ) : (
                  <ol class="attempts">
                    {d.attemptList.map((a) => (
                      <Attempt a={a} isAdmin={props.isAdmin} />
                    ))}
                  </ol>
                )}
              </td>
              {props.isAdmin ? (
                <td>{d.resendable ? <ResendForm deliveryId={d.id} back={props.back} /> : null}</td>
              ) : null}
            </tr>
          ))}
        </StackedTable>
      )}
    </section>
  );
}

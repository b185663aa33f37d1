// One channel's page (admins): its health in full, "Check connection" and its result, its latest attempts linked to
// their messages, its dead letters waiting for a re-send, and the delete confirmation. Never the secret.
import type { Child } from 'hono/jsx';
import type { CheckStep, ConnectionCheck } from '../../net/check-connection.ts';
import { ConfirmedDelete, Form, StackedTable, Time } from '../../http/views/components.tsx';
import type { ChannelAttempt, ChannelSummary } from './channels.repo.ts';
import { channelHealth, type ChannelDetail } from './channels.service.ts';
import { DeleteButton, HealthBadge, HealthSummary, lastErrorLabel, SecretBadge } from './channels.views.tsx';

const STEP_NAMES: Record<CheckStep['step'], string> = {
  resolve: 'Name resolution',
  policy: 'Address policy',
  tcp: 'TCP connection',
  tls: 'TLS handshake',
};

const OUTCOME_WORDS: Record<CheckStep['outcome'], string> = { ok: 'OK', failed: 'Failed', skipped: 'Skipped' };

/** The result of "Check connection", step by step; shown once, on the page answering the check. */
export function CheckResult(props: { check: ConnectionCheck }) {
  return (
    <div class={props.check.ok ? 'check-result ok' : 'check-result failed'} role="status">
      <p>
        <strong>{props.check.ok ? 'The receiver can be reached.' : 'The receiver cannot be reached.'}</strong> No
        request was sent to it.
      </p>
      <ol class="check-steps">
        {props.check.steps.map((s) => (
          <li class={`step ${s.outcome}`}>
            <span class="step-name">{STEP_NAMES[s.step]}</span>{' '}
            <span class="step-outcome">{OUTCOME_WORDS[s.outcome]}</span>
            <span class="step-detail">{s.detail}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

function Facts(props: { ch: ChannelSummary }) {
  const ch = props.ch;
  const health = channelHealth(ch);
  return (
    <dl class="facts channel-facts">
      <dt>Health</dt>
      <dd>
        <HealthBadge health={health} /> <HealthSummary ch={ch} health={health} />
      </dd>
      {health.state === 'failing' || (health.state === 'disabled' && health.failures > 0) ? (
        <>
          <dt>{lastErrorLabel(health)}</dt>
          <dd>
            <span class="last-error">{health.lastError ?? 'unknown'}</span> (<Time at={health.lastErrorAt} />)
          </dd>
        </>
      ) : null}
      <dt>Last success</dt>
      <dd>{ch.last_success_at === null ? 'never' : <Time at={ch.last_success_at} />}</dd>
      <dt>Classes</dt>
      <dd>{ch.classes.split(',').join(', ')}</dd>
      <dt>Secret</dt>
      <dd>
        <SecretBadge set={ch.hasSecret} />
      </dd>
      <dt>Created</dt>
      <dd>
        <Time at={ch.created_at} /> by {ch.createdByUsername ?? 'a removed account'}
      </dd>
    </dl>
  );
}

function Attempts(props: { attempts: ChannelAttempt[] }) {
  if (props.attempts.length === 0) return <p class="empty">No attempt has been made to this channel yet.</p>;
  return (
    <StackedTable class="channel-attempts" columns={['Started', 'Message', 'Result', 'Took']}>
      {props.attempts.map((a) => (
        <tr class={`attempt ${a.verdict}`}>
          <td>
            <Time at={a.started_at} />
          </td>
          <td>
            <a href={`/messages/${encodeURIComponent(a.message_id)}`}>{a.headline}</a>
          </td>
          <td>
            <span class={`state ${a.verdict === 'delivered' ? 'delivered' : 'dead'}`}>
              {a.verdict === 'delivered'
                ? `Delivered (HTTP ${a.status_code})`
                : `Failed: ${a.error ?? 'unknown error'}`}
            </span>
          </td>
          <td>
            <span class="cell-label">Took </span>
            {a.duration_ms} ms
          </td>
        </tr>
      ))}
    </StackedTable>
  );
}

function DeadLetters(props: { ch: ChannelSummary; count: number }) {
  const { ch, count } = props;
  const list = `/settings?tab=deliveries&channel=${encodeURIComponent(ch.id)}`;
  if (count === 0) {
    return (
      <p>
        No dead-lettered delivery is waiting. <a href={list}>All deliveries to this channel</a>
      </p>
    );
  }
  return (
    <div class="resend-all-offer">
      <p>
        {count} dead-lettered {count === 1 ? 'delivery is' : 'deliveries are'} waiting.{' '}
        <a href={`${list}&state=dead`}>See them</a>
      </p>
      {ch.enabled ? (
        <a class="button secondary" href={`/settings/deliveries/resend-all?channel=${encodeURIComponent(ch.id)}`}>
          Re-send all {count}…
        </a>
      ) : (
        <p class="hint">Enable the channel to re-send them.</p>
      )}
    </div>
  );
}

/** A channel's page. `check` is the result of a "Check connection" just run, shown here only. */
export function ChannelDetailView(props: { detail: ChannelDetail; check?: ConnectionCheck; notice?: Child }) {
  const ch = props.detail.channel;
  return (
    <section class="channel-detail">
      <p>
        <a href="/settings?tab=channels">All channels</a>
      </p>
      <h2>
        Channel <span class="channel-url">{ch.url}</span>
      </h2>
      {props.notice}
      <Facts ch={ch} />
      <div class="actions">
        <a class="button secondary" href={`/settings?tab=channels&edit=${ch.id}#channel-edit`}>
          Edit
        </a>
        <DeleteButton ch={ch} />
      </div>
      <Form action="/settings/channels/check" id="channel-check" class="channel-check">
        <h3>Check connection</h3>
        <p class="hint">
          Resolves the host, applies the address policy, then opens TCP and TLS as a delivery would. Nothing is posted
          to the channel.
        </p>
        <input type="hidden" name="id" value={ch.id} />
        <button type="submit">Check connection</button>
        {props.check ? <CheckResult check={props.check} /> : null}
      </Form>
      <h3>Dead letters</h3>
      <DeadLetters ch={ch} count={props.detail.deadLetters} />
      <h3>Recent attempts</h3>
      <Attempts attempts={props.detail.attempts} />
    </section>
  );
}

/** The confirmation step before a channel is deleted. */
export function DeleteChannelConfirm(props: { ch: ChannelSummary }) {
  const ch = props.ch;
  return (
    <section class="confirm">
      <h2>
        Delete the channel <span class="channel-url">{ch.url}</span>?
      </h2>
      <p>
        It stops receiving messages at once and its pending deliveries are cancelled. Finished deliveries stay on their
        messages. This cannot be undone; to pause the channel instead, edit it and untick Enabled.
      </p>
      <div class="actions">
        <ConfirmedDelete action="/settings/channels/delete" id={ch.id}>
          Delete channel
        </ConfirmedDelete>
        <a href={`/settings/channels/${ch.id}`}>Cancel</a>
      </div>
    </section>
  );
}

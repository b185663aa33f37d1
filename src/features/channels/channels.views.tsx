// The channels tab: the channel list with each channel's health, the create form, one channel's edit form, and the
// retention dial. A channel's secret is never rendered: only a "set" / "none" badge.
import type { Child } from 'hono/jsx';
import { Checkbox, Field, Form, Notice, StackedTable, Time } from '../../http/views/components.tsx';
import { SecretRetryFields, withSecretAgain } from '../../http/views/secret-retry.tsx';
import { CLASSES } from '../messages/classes.ts';
import { RETENTION_MAX_DAYS, RETENTION_MIN_DAYS } from '../messages/retention.service.ts';
import type { ChannelSummary } from './channels.repo.ts';
import { channelHealth, type ChannelErrors, type ChannelHealth } from './channels.service.ts';

/** Banners for ?notice= after a redirect. */
export const CHANNEL_NOTICES: Record<string, { kind: 'success' | 'info' | 'error'; text: string }> = {
  created: { kind: 'success', text: 'Channel created. It is enabled.' },
  updated: { kind: 'success', text: 'Channel saved.' },
  deleted: { kind: 'success', text: 'Channel deleted.' },
  gone: { kind: 'info', text: 'That channel no longer exists.' },
  'retention-saved': { kind: 'success', text: 'Retention saved.' },
  'not-deleted': { kind: 'info', text: 'Nothing was deleted.' },
};

/** The "set" / "none" badge standing in for a channel's write-only secret. */
export function SecretBadge(props: { set: boolean }) {
  return <span class={props.set ? 'badge secret-set' : 'badge secret-none'}>{props.set ? 'set' : 'none'}</span>;
}

function ClassBoxes(props: { checked: string[]; error?: string; formId: string }) {
  return (
    <fieldset class={props.error ? 'classes has-error' : 'classes'} id={`${props.formId}-classes`}>
      <legend>Classes</legend>
      {CLASSES.map((cls) => (
        // The class error belongs to the fieldset (below), not to each box.
        <Checkbox label={cls} name="classes" value={cls} checked={props.checked.includes(cls)} error="" />
      ))}
      {props.error ? <p class="error">{props.error}</p> : null}
    </fieldset>
  );
}

/** The skip box's label when the secret a refused form carried would be dropped: the channel then has none. */
const NO_SECRET = 'No secret: send unsigned bodies';
/** The skip box's label on the edit form of a channel that has a secret: a blank field keeps it. */
const KEEP_SECRET = 'Keep the current secret';

/**
 * The form that creates a channel. `askSecret`: a refused attempt carried a secret, which is never shown again, so
 * the field says to enter it again and the form offers to go on without one.
 */
export function CreateChannelForm(props: {
  values?: { url?: string; classes?: string[] };
  errors?: ChannelErrors;
  askSecret?: boolean;
}) {
  const ask = props.askSecret ?? false;
  const e = withSecretAgain(props.errors ?? {}, { field: 'secret', ask, what: 'secret', skipLabel: NO_SECRET });
  return (
    <Form action="/settings/channels" class="channel-create" id="channel-create" errors={e}>
      <h3>Add a channel</h3>
      <Field
        label="Channel URL"
        name="url"
        type="url"
        value={props.values?.url}
        required
        maxlength={2048}
        hint="https:// only; http:// is allowed to a loopback IP address such as http://127.0.0.1:8080/."
      />
      <ClassBoxes checked={props.values?.classes ?? []} error={e.classes} formId="channel-create" />
      <Field
        label="Secret (optional)"
        name="secret"
        type="password"
        autocomplete="off"
        hint="Signs each body with HMAC-SHA256. It cannot be read back once saved."
      />
      <SecretRetryFields ask={ask} skipLabel={NO_SECRET} hint="The channel is created without a secret." />
      <button type="submit">Add channel</button>
    </Form>
  );
}

/** The form that edits one channel; `askSecret` as on the create form, for a new secret typed in a refused attempt. */
export function EditChannelForm(props: {
  channel: ChannelSummary;
  values?: { url?: string; classes?: string[]; enabled?: boolean };
  errors?: ChannelErrors;
  askSecret?: boolean;
}) {
  const ch = props.channel;
  const ask = props.askSecret ?? false;
  const skipLabel = ch.hasSecret ? KEEP_SECRET : NO_SECRET;
  const e = withSecretAgain(props.errors ?? {}, { field: 'secret', ask, what: 'new secret', skipLabel });
  const classes = props.values?.classes ?? ch.classes.split(',');
  return (
    <Form action="/settings/channels/update" class="channel-edit" id="channel-edit" errors={e}>
      <h3>Edit channel</h3>
      <input type="hidden" name="id" value={ch.id} />
      <Field label="Channel URL" name="url" type="url" value={props.values?.url ?? ch.url} required maxlength={2048} />
      <ClassBoxes checked={classes} error={e.classes} formId="channel-edit" />
      <Checkbox label="Enabled" name="enabled" value="on" checked={props.values?.enabled ?? ch.enabled === 1} />
      <p>
        Secret: <SecretBadge set={ch.hasSecret} />
      </p>
      <Field
        label="New secret"
        name="secret"
        type="password"
        autocomplete="off"
        hint="Leave blank to keep the current secret; type a value to replace it."
      />
      <SecretRetryFields
        ask={ask}
        skipLabel={skipLabel}
        hint={ch.hasSecret ? 'The stored secret stays as it is.' : 'The channel stays without a secret.'}
      />
      <Checkbox label="Remove the secret" name="clear_secret" value="on" />
      <button type="submit">Save channel</button> <a href={`/settings/channels/${ch.id}`}>Cancel</a>
    </Form>
  );
}

/** A channel's health in words and colour: the word carries the meaning, the class only colours it. */
export function HealthBadge(props: { health: ChannelHealth }) {
  const words = { healthy: 'Healthy', failing: 'Failing', disabled: 'Disabled' }[props.health.state];
  return <span class={`health ${props.health.state}`}>{words}</span>;
}

/** What a channel's last error is called: on a disabled channel it is history. */
export const lastErrorLabel = (health: ChannelHealth) =>
  health.state === 'disabled' ? 'Last error before it was disabled' : 'Last error';

const failuresWord = (n: number) => `${n} consecutive ${n === 1 ? 'failure' : 'failures'}`;

/**
 * One line under the badge: since when and how often it fails (a disabled channel: the streak it was disabled with), or
 * its last success.
 */
export function HealthSummary(props: { ch: ChannelSummary; health: ChannelHealth }) {
  const h = props.health;
  if (h.state === 'failing') {
    return (
      <span class="health-detail">
        since <Time at={h.since} />; {failuresWord(h.failures)}
      </span>
    );
  }
  if (h.state === 'disabled' && h.failures > 0) {
    return (
      <span class="health-detail">
        nothing is sent to it; before it was disabled: {failuresWord(h.failures)} since <Time at={h.since} />
      </span>
    );
  }
  if (h.state === 'disabled') return <span class="health-detail">nothing is sent to it</span>;
  return (
    <span class="health-detail">
      {props.ch.last_success_at === null ? 'no delivery yet' : 'last delivery succeeded'}
    </span>
  );
}

function ChannelRow(props: { ch: ChannelSummary }) {
  const ch = props.ch;
  const health = channelHealth(ch);
  return (
    <tr class={`channel ${health.state}`}>
      <td>
        <a class="channel-url" href={`/settings/channels/${ch.id}`}>
          {ch.url}
        </a>
        <span class="quiet">
          {ch.classes.split(',').join(', ')} · secret <SecretBadge set={ch.hasSecret} />
        </span>
      </td>
      <td>
        <HealthBadge health={health} /> <HealthSummary ch={ch} health={health} />
        {health.state !== 'healthy' && health.lastError ? (
          <span class="last-error">
            {lastErrorLabel(health)}: {health.lastError}
          </span>
        ) : null}
      </td>
      <td>
        <span class="cell-label">Last success: </span>
        <Time at={ch.last_success_at} />
      </td>
      <td class="actions">
        <a href={`/settings?tab=channels&edit=${ch.id}#channel-edit`} aria-label={`Edit channel ${ch.url}`}>
          Edit
        </a>{' '}
        <DeleteButton ch={ch} />
      </td>
    </tr>
  );
}

/** The delete button: it leads to a confirmation step, which alone deletes. */
export function DeleteButton(props: { ch: ChannelSummary }) {
  return (
    <Form action="/settings/channels/delete" class="inline">
      <input type="hidden" name="id" value={props.ch.id} />
      <button type="submit" class="danger" aria-label={`Delete channel ${props.ch.url}`}>
        Delete
      </button>
    </Form>
  );
}

/** The list of channels, one page at a time. */
export function ChannelList(props: { channels: ChannelSummary[]; total: number; page: number; pages: number }) {
  if (props.total === 0) return <p class="empty">No channels. Messages are kept in the in-app store only.</p>;
  return (
    <>
      <StackedTable class="channels" columns={['Channel', 'Health', 'Last success', 'Actions']}>
        {props.channels.map((ch) => (
          <ChannelRow ch={ch} />
        ))}
      </StackedTable>
      {props.pages > 1 ? (
        <nav class="pager" aria-label="Channel pages">
          {props.page > 1 ? <a href={`/settings?tab=channels&page=${props.page - 1}`}>Previous channels</a> : null}{' '}
          <span>
            Page {props.page} of {props.pages} ({props.total} channels)
          </span>{' '}
          {props.page < props.pages ? (
            <a href={`/settings?tab=channels&page=${props.page + 1}`}>Next channels</a>
          ) : null}
        </nav>
      ) : null}
    </>
  );
}

/** The retention dial: how long messages and their delivery records are kept. */
export function RetentionForm(props: { days: number; value?: string; error?: string }) {
  return (
    <Form
      action="/settings/channels/retention"
      class="retention"
      id="channel-retention"
      errors={props.error ? { days: props.error } : undefined}
    >
      <h3>Retention</h3>
      <p>
        Messages and their delivery records are kept for <strong>{props.days}</strong> days. A message that still has a
        pending delivery is kept until it is delivered or dead-lettered.
      </p>
      <Field
        label="Keep messages for (days)"
        name="days"
        type="number"
        value={props.value ?? String(props.days)}
        required
        hint={`${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS} days.`}
      />
      <button type="submit">Save retention</button>
    </Form>
  );
}

/** The whole tab body. */
export function ChannelsTabView(props: { notice?: Child; list: Child; form: Child; retention: Child }) {
  return (
    <section>
      <h2>Notification channels</h2>
      <p class="hint">
        Every message is kept in the in-app store. Each enabled channel also receives a signed JSON copy of every
        message of the classes it subscribes to.
      </p>
      {props.notice}
      {props.list}
      {props.form}
      {props.retention}
    </section>
  );
}

/** The notice banner for a ?notice= code. */
export function channelNotice(code: string | undefined): Child {
  const n = code && Object.hasOwn(CHANNEL_NOTICES, code) ? CHANNEL_NOTICES[code] : undefined;
  return n ? <Notice kind={n.kind}>{n.text}</Notice> : null;
}

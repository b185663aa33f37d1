// The inbox list and the message detail page.
import type { Child } from 'hono/jsx';
import { Form, Notice, RelativeTime } from '../../http/views/components.tsx';
import { MessageDeliveries } from '../delivery/delivery.views.tsx';
import { CAUSES, CLASSES } from '../messages/classes.ts';
import { CAUSE_LABEL, CLASS_LABEL } from './inbox.labels.ts';
import type { InboxFilter, InboxItem, MessageDetail } from './inbox.service.ts';

/** Hidden "come back here" field for the read forms. */
function Back(props: { to: string }) {
  return <input type="hidden" name="back" value={props.to} />;
}

/** The query string of an inbox view: its filter, plus a page cursor. */
export function inboxQuery(filter: InboxFilter, before?: string): string {
  const q = new URLSearchParams();
  if (filter.unreadOnly) q.set('show', 'unread');
  if (filter.class) q.set('class', filter.class);
  if (filter.cause) q.set('cause', filter.cause);
  if (before) q.set('before', before);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The "mark read" button of one message. */
export function MarkReadButton(props: { id: string; back: string; headline: string }) {
  return (
    <Form action="/messages/read" class="inline">
      <input type="hidden" name="id" value={props.id} />
      <Back to={props.back} />
      <button type="submit" class="link" aria-label={`Mark read: ${props.headline}`}>
        Mark read
      </button>
    </Form>
  );
}

/** A subject key may wrap only after its separators (`/ : . _ @ ? & =`), never inside a word. */
function Key(props: { value: string }) {
  const parts = props.value.split(/(?<=[/:._@?&=])/);
  return (
    <span class="key">
      {parts.map((part, i) => (
        <>
          {i > 0 ? <wbr /> : null}
          {part}
        </>
      ))}
    </span>
  );
}

/** What a message is about: the subject's kind in words, then its key. */
function Subject(props: { m: InboxItem }) {
  return (
    <span class="subject">
      {props.m.subject_kind} <Key value={props.m.subject_key} />
    </span>
  );
}

/** One group of filter links: "All" and each choice, the current one marked. */
function FilterGroup(props: {
  label: string;
  base: string;
  filter: InboxFilter;
  choices: [string, InboxFilter][];
  none: InboxFilter;
}) {
  const here = inboxQuery(props.filter);
  const link = (text: string, f: InboxFilter) => {
    const q = inboxQuery(f);
    return (
      <a href={`${props.base}${q}`} aria-current={q === here ? 'true' : undefined}>
        {text}
      </a>
    );
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of filter links, not of form controls, so not a fieldset
    <div class="group" role="group" aria-label={props.label}>
      <span aria-hidden="true">{props.label}:</span>
      {link('All', props.none)}
      {props.choices.map(([text, f]) => link(text, f))}
    </div>
  );
}

/** The filter bar: unread only, by category (class), by reason (cause); links, so no script. */
function Filters(props: { base: string; filter: InboxFilter }) {
  const f = props.filter;
  return (
    <nav class="inbox-filters" aria-label="Filters">
      <FilterGroup
        label="Show"
        base={props.base}
        filter={f}
        none={{ ...f, unreadOnly: undefined }}
        choices={[['Unread', { ...f, unreadOnly: true }]]}
      />
      <FilterGroup
        label="Category"
        base={props.base}
        filter={f}
        none={{ ...f, class: undefined }}
        choices={CLASSES.map((cls) => [CLASS_LABEL[cls], { ...f, class: cls }])}
      />
      <FilterGroup
        label="Reason"
        base={props.base}
        filter={f}
        none={{ ...f, cause: undefined }}
        choices={CAUSES.map((cause) => [CAUSE_LABEL[cause], { ...f, cause }])}
      />
    </nav>
  );
}

/** The admin's hint on a row whose deliveries are in trouble. */
function TroubleHint(props: { trouble: InboxItem['trouble'] }) {
  const t = props.trouble;
  if (!t || (t.dead === 0 && t.failing === 0)) return null;
  const parts = [t.dead > 0 ? `${t.dead} dead-lettered` : '', t.failing > 0 ? `${t.failing} still failing` : ''].filter(
    Boolean,
  );
  return <span class={t.dead > 0 ? 'hint-bad' : 'hint-warn'}>Delivery: {parts.join(', ')}</span>;
}

/** One row of the inbox: the headline first, then quiet metadata. */
function InboxRow(props: { m: InboxItem; now: number; back: string }) {
  const m = props.m;
  return (
    <li class={m.read ? 'message read' : 'message unread'}>
      <span class="headline">
        {m.read ? null : <span class="visually-hidden">Unread: </span>}
        <a href={`/messages/${m.id}`}>{m.headline}</a>
      </span>
      <span class="when">
        <RelativeTime at={m.instant} now={props.now} />
      </span>
      <span class="meta">
        <Subject m={m} />
        <span>
          {CLASS_LABEL[m.class]} · {CAUSE_LABEL[m.cause]}
        </span>
        {m.census === null ? null : <span>Count: {String(m.census)}</span>}
        {m.link ? (
          <a href={m.link} aria-label={`Open in the service: ${m.headline}`}>
            Open in the service
          </a>
        ) : null}
        <TroubleHint trouble={m.trouble} />
        {m.read ? null : <MarkReadButton id={m.id} back={props.back} headline={m.headline} />}
      </span>
    </li>
  );
}

/** One page of the inbox. */
export function InboxPage(props: {
  base: string;
  items: InboxItem[];
  filter: InboxFilter;
  olderHref?: string;
  first: boolean;
  back: string;
  now: number;
  anyUnread: boolean;
  notice?: Child;
}) {
  const filtered = props.filter.unreadOnly || props.filter.class || props.filter.cause;
  return (
    <section>
      {props.notice}
      <div class="toolbar">
        {props.anyUnread ? (
          <Form action="/messages/read-all" class="inline">
            <Back to={props.base} />
            <button type="submit" class="secondary">
              Mark all as read
            </button>
          </Form>
        ) : null}
      </div>
      <Filters base={props.base} filter={props.filter} />
      {props.items.length === 0 ? (
        <p class="empty">
          {!props.first ? 'No older messages.' : filtered ? 'No messages match these filters.' : 'No messages yet.'}
        </p>
      ) : (
        <ul class="messages">
          {props.items.map((m) => (
            <InboxRow m={m} now={props.now} back={props.back} />
          ))}
        </ul>
      )}
      <nav class="pager" aria-label="Pages">
        {props.first ? null : <a href={`${props.base}${inboxQuery(props.filter)}`}>Newest messages</a>}
        {props.olderHref ? <a href={props.olderHref}>Older messages</a> : null}
      </nav>
    </section>
  );
}

/** The "mark unread" button of the message page (back to the inbox: reopening the page would mark it read again). */
function MarkUnreadButton(props: { id: string }) {
  return (
    <Form action="/messages/unread" class="inline">
      <input type="hidden" name="id" value={props.id} />
      <button type="submit" class="secondary">
        Mark unread
      </button>
    </Form>
  );
}

/**
 * One message (its headline is the page's title): what it is about, the exact body sent, and where it was delivered.
 */
export function MessagePage(props: { detail: MessageDetail; isAdmin: boolean; now: number; notice?: Child }) {
  const m = props.detail.message;
  return (
    <section>
      {props.notice}
      <div class="actions">
        <span class="muted">{m.read ? 'You have read this message.' : 'Marked read now that you opened it.'}</span>
        <MarkUnreadButton id={m.id} />
      </div>
      <dl class="facts">
        <dt>About</dt>
        <dd>
          <Subject m={m} />
        </dd>
        <dt>Category</dt>
        <dd>{CLASS_LABEL[m.class]}</dd>
        <dt>Reason</dt>
        <dd>{CAUSE_LABEL[m.cause]}</dd>
        <dt>Happened</dt>
        <dd>
          <RelativeTime at={m.instant} now={props.now} />
        </dd>
        {m.census === null ? null : (
          <>
            <dt>Count</dt>
            <dd>{String(m.census)}</dd>
          </>
        )}
        <dt>Link</dt>
        <dd class="url">{m.link ? <a href={m.link}>{m.link}</a> : 'None'}</dd>
        <dt>Received</dt>
        <dd>
          <RelativeTime at={m.created_at} now={props.now} />
        </dd>
        <dt>Message id</dt>
        <dd>
          <code>{m.id}</code>
        </dd>
      </dl>
      <MessageDeliveries
        deliveries={props.detail.deliveries}
        isAdmin={props.isAdmin}
        back={`/messages/${encodeURIComponent(m.id)}`}
      />
      <h2>Body sent to channels</h2>
      <pre class="body">{m.body}</pre>
      <p>
        <a href="/inbox">Back to the inbox</a>
      </p>
    </section>
  );
}

/** Banner shown after a read action. */
export function readNotice(code: string | undefined): Child {
  if (code === 'all-read') return <Notice kind="success">All messages are marked read.</Notice>;
  if (code === 'unread') return <Notice kind="success">The message is marked unread.</Notice>;
  return null;
}

// The inbox list and the message detail page.
import type { Child } from 'hono/jsx';
import { Form, Notice, Time } from '../../http/views/components.tsx';
import { MessageDeliveries } from '../delivery/delivery.views.tsx';
import type { InboxItem, MessageDetail } from './inbox.service.ts';

/** Hidden "come back here" field for the read forms. */
function Back(props: { to: string }) {
  return <input type="hidden" name="back" value={props.to} />;
}

/** The "mark read" button of one message. */
export function MarkReadButton(props: { id: string; back: string; headline: string }) {
  return (
    <Form action="/messages/read" class="inline">
      <input type="hidden" name="id" value={props.id} />
      <Back to={props.back} />
      <button type="submit" class="secondary" aria-label={`Mark read: ${props.headline}`}>
        Mark read
      </button>
    </Form>
  );
}

function Subject(props: { m: InboxItem }) {
  return (
    <span class="subject">
      <span class="badge">{props.m.subject_kind}</span> <code>{props.m.subject_key}</code>
    </span>
  );
}

/** One page of the inbox. */
export function InboxPage(props: { base: string; items: InboxItem[]; olderHref?: string; first: boolean; back: string; notice?: Child }) {
  return (
    <section>
      {props.notice}
      <div class="toolbar">
        <Form action="/messages/read-all" class="inline">
          <Back to={props.base} />
          <button type="submit" class="secondary">
            Mark all as read
          </button>
        </Form>
      </div>
      {props.items.length === 0 ? (
        <p class="empty">{props.first ? 'No messages yet.' : 'No older messages.'}</p>
      ) : (
        <table class="messages">
          <thead>
            <tr>
              <th scope="col">Message</th>
              <th scope="col">Class</th>
              <th scope="col">Cause</th>
              <th scope="col">Subject</th>
              <th scope="col">Instant</th>
              <th scope="col">Census</th>
              <th scope="col">Link</th>
              <th scope="col">Read</th>
            </tr>
          </thead>
          <tbody>
            {props.items.map((m) => (
              <tr class={m.read ? 'message read' : 'message unread'}>
                <td>
                  <a href={`/messages/${m.id}`}>{m.headline}</a>
                </td>
                <td>{m.class}</td>
                <td>{m.cause}</td>
                <td>
                  <Subject m={m} />
                </td>
                <td>
                  <Time at={m.instant} />
                </td>
                <td>{m.census === null ? '—' : String(m.census)}</td>
                <td>{m.link ? <a href={m.link}>open</a> : '—'}</td>
                <td>{m.read ? 'read' : <MarkReadButton id={m.id} back={props.back} headline={m.headline} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {props.first ? null : <a href={props.base}>Newest messages</a>}
        {props.olderHref ? <a href={props.olderHref}>Older messages</a> : null}
      </nav>
    </section>
  );
}

/** One message: its fields, the exact body sent to channels, and where it was delivered. */
export function MessagePage(props: { detail: MessageDetail; isAdmin: boolean; back: string }) {
  const m = props.detail.message;
  return (
    <section>
      <p class="lead">{m.headline}</p>
      {m.read ? <p class="hint">You have read this message.</p> : <MarkReadButton id={m.id} back={props.back} headline={m.headline} />}
      <table class="fields">
        <tbody>
          <tr>
            <th scope="row">Class</th>
            <td>{m.class}</td>
          </tr>
          <tr>
            <th scope="row">Cause</th>
            <td>{m.cause}</td>
          </tr>
          <tr>
            <th scope="row">Subject</th>
            <td>
              <Subject m={m} />
            </td>
          </tr>
          <tr>
            <th scope="row">Instant</th>
            <td>
              <Time at={m.instant} />
            </td>
          </tr>
          <tr>
            <th scope="row">Census</th>
            <td>{m.census === null ? '—' : String(m.census)}</td>
          </tr>
          <tr>
            <th scope="row">Link</th>
            <td>{m.link ? <a href={m.link}>{m.link}</a> : '—'}</td>
          </tr>
          <tr>
            <th scope="row">Stored</th>
            <td>
              <Time at={m.created_at} />
            </td>
          </tr>
          <tr>
            <th scope="row">Message id</th>
            <td>
              <code>{m.id}</code>
            </td>
          </tr>
        </tbody>
      </table>
      <MessageDeliveries deliveries={props.detail.deliveries} isAdmin={props.isAdmin} back={`/messages/${encodeURIComponent(m.id)}`} />
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
  return null;
}

// The home page body: what needs attention now (unread messages; for admins failing channels, dead letters, open
// invitations) and, for a new admin, the first steps not taken yet.
import { RelativeTime } from '../../http/views/components.tsx';
import type { Account } from '../auth/accounts.repo.ts';
import type { AdminAttention, HomeView } from './home.service.ts';
import { HOME_COUNT_CAP } from './home.service.ts';

type HomeAccount = Pick<Account, 'username' | 'role'>;

/** A capped count in words: "1000+" at the cap. */
function count(n: number): string {
  return n >= HOME_COUNT_CAP ? `${HOME_COUNT_CAP}+` : String(n);
}

/** "1 thing" / "3 things". */
function plural(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

const STEPS: Record<AdminAttention['todo'][number], { href: string; text: string; why: string }> = {
  channel: {
    href: '/settings?tab=channels',
    text: 'Declare a notification channel',
    why: 'so messages also reach your own systems.',
  },
  sso: {
    href: '/settings?tab=sso',
    text: 'Declare a single sign-on provider',
    why: 'so people can sign in with your identity provider.',
  },
  invite: { href: '/settings?tab=team', text: 'Invite someone', why: 'so you are not the only one who can sign in.' },
};

/** The first steps a new admin has not taken yet; gone once all are done. */
function Checklist(props: { todo: AdminAttention['todo'] }) {
  if (props.todo.length === 0) return null;
  return (
    <section class="card" aria-labelledby="home-start">
      <h2 id="home-start">Get started</h2>
      <ol class="checklist">
        {props.todo.map((step) => (
          <li>
            <a href={STEPS[step].href}>{STEPS[step].text}</a>, {STEPS[step].why}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** Failing channels, dead letters of the last day and open invitations, as counts with links. */
function Attention(props: { a: AdminAttention; now: number }) {
  const a = props.a;
  const calm = a.failing.count === 0 && a.deadLastDay === 0;
  return (
    <section class={calm ? 'card' : 'card attention'} aria-labelledby="home-attention">
      <h2 id="home-attention">Needs attention</h2>
      {calm ? <p>Every channel is healthy and nothing was dead-lettered in the last day.</p> : null}
      <ul>
        {a.failing.count > 0 ? (
          <li>
            <a href="/settings?tab=channels">{plural(a.failing.count, 'channel is failing', 'channels are failing')}</a>
            <ul>
              {a.failing.rows.map((ch) => (
                <li>
                  {plural(ch.consecutive_failures, 'failed attempt', 'failed attempts')} in a row
                  {ch.last_error_at === null ? null : (
                    <>
                      , last <RelativeTime at={ch.last_error_at} now={props.now} />
                    </>
                  )}
                  : <span class="url">{ch.url}</span>
                </li>
              ))}
            </ul>
          </li>
        ) : null}
        {a.deadLastDay > 0 ? (
          <li>
            <a href="/settings?tab=deliveries">
              {plural(a.deadLastDay, 'delivery', 'deliveries')} dead-lettered in the last day
            </a>
          </li>
        ) : null}
        <li>
          {a.openInvitations > 0 ? (
            <a href="/settings?tab=team">{plural(a.openInvitations, 'invitation is', 'invitations are')} still open</a>
          ) : (
            <>No invitation is open.</>
          )}
        </li>
      </ul>
    </section>
  );
}

/** The latest unread messages, with a link to the rest. */
function Unread(props: { unread: HomeView['unread']; now: number }) {
  const u = props.unread;
  return (
    <section class="card" aria-labelledby="home-unread">
      <h2 id="home-unread">Unread messages</h2>
      {u.count === 0 ? (
        <p>
          You are all caught up. <a href="/inbox">Open the inbox</a>
        </p>
      ) : (
        <>
          <ul>
            {u.latest.map((m) => (
              <li>
                <a href={`/messages/${m.id}`}>{m.headline}</a>{' '}
                <span class="meta nowrap">
                  <RelativeTime at={m.instant} now={props.now} />
                </span>
              </li>
            ))}
          </ul>
          <p>
            <a href="/inbox?show=unread">
              {u.count > 99 ? 'All 99+ unread messages' : `All ${plural(u.count, 'unread message', 'unread messages')}`}
            </a>
          </p>
        </>
      )}
    </section>
  );
}

/** The home page: who is signed in, then what needs attention, then (for a new admin) the first steps. */
export function HomeBody(props: { account: HomeAccount; view: HomeView; now: number }) {
  const { account, view } = props;
  return (
    <section>
      <p class="lead">
        Signed in as <strong>{account.username}</strong> with the role <strong>{account.role}</strong>.
      </p>
      <div class="cards">
        {view.admin ? <Checklist todo={view.admin.todo} /> : null}
        <Unread unread={view.unread} now={props.now} />
        {view.admin ? <Attention a={view.admin} now={props.now} /> : null}
      </div>
      <ul class="links meta">
        <li>
          <a href="/profile">Manage your password, second factor, API tokens and sessions</a>
        </li>
        {account.role === 'admin' ? (
          <li>
            <a href="/settings">Administer the team, single sign-on, channels and deliveries</a>
          </li>
        ) : null}
      </ul>
    </section>
  );
}

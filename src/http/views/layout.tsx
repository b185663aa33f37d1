// The page frame: a skip link, navigation, the signed-in user's name and role, and a sign-out button.
import type { Child } from 'hono/jsx';
import { raw } from 'hono/html';
import { CsrfContext, Form } from './components.tsx';

/** Who is looking at the page, when signed in. */
export interface Viewer {
  username: string;
  role: 'admin' | 'viewer';
  /** Unread messages for the bell, as counted by the messages feature (up to its cap); undefined hides the bell. */
  unread?: number;
}

/** The main navigation: label, target, and the path prefixes that make an item the current one. */
const NAV: { label: string; href: string; match: string[]; admin?: boolean }[] = [
  { label: 'Home', href: '/', match: [] },
  { label: 'Inbox', href: '/inbox', match: ['/inbox', '/messages'] },
  { label: 'Profile', href: '/profile', match: ['/profile'] },
  { label: 'Settings', href: '/settings', match: ['/settings'], admin: true },
];

/** Whether a navigation item is the page at `path` (Home only for `/` itself). */
function isCurrent(item: (typeof NAV)[number], path: string | undefined): boolean {
  if (path === undefined) return false;
  if (item.href === '/') return path === '/';
  return item.match.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** The unread count beside "Inbox": nothing at 0, the count up to 99, then "99+"; read out as "<n> unread". */
function Bell(props: { unread: number | undefined }) {
  const n = props.unread;
  if (n === undefined || n <= 0) return null;
  const text = n > 99 ? '99+' : String(n);
  return (
    <span class="bell">
      {text}
      <span class="visually-hidden"> unread</span>
    </span>
  );
}

/** The whole HTML document around a page body; `path` marks the current navigation item. */
export function Layout(props: {
  title: string;
  viewer?: Viewer;
  csrf?: string;
  path?: string;
  /** The ceremony script, on the pages that run a WebAuthn ceremony only (src/http/ceremony.tsx). */
  script?: { src: string; integrity: string };
  children: Child;
}) {
  const v = props.viewer;
  return (
    <>
      {raw('<!doctype html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="color-scheme" content="light dark" />
          <title>{`${props.title} · svc`}</title>
          <link rel="stylesheet" href="/static/app.css" />
          {props.script ? <script src={props.script.src} integrity={props.script.integrity} defer /> : null}
        </head>
        <body>
          <a class="skip-link" href="#main">
            Skip to content
          </a>
          <CsrfContext.Provider value={props.csrf}>
            <header class="top">
              <a class="brand" href="/">
                svc
              </a>
              {v ? (
                <nav aria-label="Main">
                  {NAV.filter((item) => !item.admin || v.role === 'admin').map((item) => (
                    <a href={item.href} aria-current={isCurrent(item, props.path) ? 'page' : undefined}>
                      {item.label}
                      {item.href === '/inbox' ? <Bell unread={v.unread} /> : null}
                    </a>
                  ))}
                </nav>
              ) : null}
              {v ? (
                <div class="who">
                  <span class="username" title={v.username}>
                    {v.username}
                  </span>{' '}
                  <span class={`role role-${v.role}`}>{v.role}</span>
                  <Form action="/logout" class="inline">
                    <button type="submit" class="secondary">
                      Sign out
                    </button>
                  </Form>
                </div>
              ) : null}
            </header>
            <main id="main" tabindex={-1}>
              <h1>{props.title}</h1>
              {props.children}
            </main>
          </CsrfContext.Provider>
        </body>
      </html>
    </>
  );
}

// The page frame: navigation, the signed-in user's name and role, and a sign-out button.
import type { Child } from 'hono/jsx';
import { CsrfContext, Form } from './components.tsx';

/** Who is looking at the page, when signed in. */
export interface Viewer {
  username: string;
  role: 'admin' | 'viewer';
  /** Unread messages for the bell, as counted by the messages feature (up to its cap); undefined hides the bell. */
  unread?: number;
}

/** The whole HTML document around a page body. */
export function Layout(props: { title: string; viewer?: Viewer; csrf?: string; children: Child }) {
  const v = props.viewer;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · svc`}</title>
        <link rel="stylesheet" href="/static/app.css" />
      </head>
      <body>
        <CsrfContext.Provider value={props.csrf}>
          <header class="top">
            <a class="brand" href="/">
              svc
            </a>
            {v ? (
              <nav aria-label="Main">
                <a href="/">Home</a>
                <a href="/inbox">
                  Inbox
                  {v.unread !== undefined ? (
                    <span class="bell" aria-label={`${v.unread} unread`}>
                      {v.unread > 99 ? '99+' : String(v.unread)}
                    </span>
                  ) : null}
                </a>
                <a href="/profile">Profile</a>
                {v.role === 'admin' ? <a href="/settings">Settings</a> : null}
              </nav>
            ) : null}
            {v ? (
              <div class="who">
                <span class="username">{v.username}</span> <span class={`role role-${v.role}`}>{v.role}</span>
                <Form action="/logout" class="inline">
                  <button type="submit">Sign out</button>
                </Form>
              </div>
            ) : null}
          </header>
          <main>
            <h1>{props.title}</h1>
            {props.children}
          </main>
        </CsrfContext.Provider>
      </body>
    </html>
  );
}

// The page frame: navigation, the signed-in user's name and role, and a sign-out button.
import type { Child } from 'hono/jsx';
import { raw } from 'hono/utils/html';
import { CsrfContext, Form } from './components.tsx';
import { compileTemplate, escapeHtml, fillTemplate, slot, type Template } from './template.ts';

/** Who is looking at the page, when signed in. */
export interface Viewer {
  username: string;
  role: 'admin' | 'viewer';
  /** Unread messages for the bell; undefined hides it. */
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

// The layout around every page is the same markup with a handful of values changed: each shape of it (signed in as
// which role, bell or not, form token or not) is precompiled from <Layout> (see template.ts); layout.test.tsx checks
// the two agree for every shape.
type SlotName = 'title' | 'username' | 'unreadLabel' | 'unreadText' | 'csrf' | 'body';
const compiledShapes = new Map<string, Template<SlotName>>();

function compileShape(role: Viewer['role'] | undefined, bell: boolean, csrf: boolean): Template<SlotName> {
  const viewer: Viewer | undefined = role ? { username: slot('username'), role, unread: bell ? (slot('unreadLabel') as unknown as number) : undefined } : undefined;
  const html = (
    <Layout title={slot('title')} viewer={viewer} csrf={csrf ? slot('csrf') : undefined}>
      {raw(slot('body'))}
    </Layout>
  ).toString() as string;
  const expected: SlotName[] = ['title', 'title', 'body'];
  // Name, bell and the sign-out form (the layout's only use of the form token) are shown to a signed-in viewer.
  if (role) expected.push('username');
  if (role && bell) expected.push('unreadLabel', 'unreadText');
  if (role && csrf) expected.push('csrf');
  // The bell shows the count in two forms: its label always, its text capped ("99+"); the marker stood for both.
  return compileTemplate(html.replace(`>${slot('unreadLabel')}<`, `>${slot('unreadText')}<`), expected);
}

/** The whole document for a page: what <Layout> renders, from its precompiled chunks; `bodyHtml` is already HTML. */
export function renderLayout(props: { title: string; viewer?: Viewer; csrf?: string }, bodyHtml: string): string {
  const v = props.viewer;
  const key = `${v?.role ?? '-'}:${v?.unread !== undefined}:${props.csrf !== undefined && props.csrf !== ''}`;
  let shape = compiledShapes.get(key);
  if (!shape) {
    shape = compileShape(v?.role, v?.unread !== undefined, props.csrf !== undefined && props.csrf !== '');
    compiledShapes.set(key, shape);
  }
  return fillTemplate(shape, {
    title: escapeHtml(props.title),
    username: v ? escapeHtml(v.username) : '',
    unreadLabel: v?.unread !== undefined ? escapeHtml(String(v.unread)) : '',
    unreadText: v?.unread !== undefined ? escapeHtml(v.unread > 99 ? '99+' : String(v.unread)) : '',
    csrf: props.csrf ? escapeHtml(props.csrf) : '',
    body: bodyHtml,
  });
}

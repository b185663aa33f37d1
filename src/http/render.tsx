// Renders a page inside the layout for the current viewer; the one way routes produce HTML.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { problem } from './problem.ts';
import type { Ctx } from './env.ts';
import { isApiPath } from './gate.ts';
import { Layout, type Viewer } from './views/layout.tsx';

/**
 * Renders `body` as a full page: the layout shows a fully signed-in viewer their name, role and (unless `bell` is
 * false) unread count, asked of the context's `unreadCount` here unless the page already counted it (`unread`).
 */
export async function render(
  c: Ctx,
  title: string,
  body: Child,
  status: ContentfulStatusCode = 200,
  options: { bell?: boolean; unread?: number } = {},
): Promise<Response> {
  const session = c.get('session');
  let viewer: Viewer | undefined;
  if (session?.stage === 'full') {
    const { id, username, role } = session.account;
    const count = c.get('unreadCount');
    viewer = { username, role, unread: options.bell === false ? undefined : (options.unread ?? (await count?.(id))) };
  }
  return c.html(
    <Layout title={title} viewer={viewer} csrf={session?.csrfToken} path={c.req.path}>
      {body}
    </Layout>,
    status,
  );
}

/**
 * A plain error page with a status code; never a stack trace. A 5xx page reads nothing from the database (no bell), so
 * the page for a failed request renders even when the database is what failed.
 */
export function errorPage(c: Ctx, status: ContentfulStatusCode, title: string, message: string): Promise<Response> {
  // The JSON API answers the same conditions (413, 404, 500) as problem details.
  if (isApiPath(c.req.path)) return Promise.resolve(problem(c, status, problemTypeOf(status), message));
  return render(
    c,
    title,
    <p class="lead">
      {message} <a href="/">Go to the home page</a>.
    </p>,
    status,
    { bell: status < 500 },
  );
}

/** The problem type of an error page's status, for the same condition met on /api/. */
function problemTypeOf(status: number): string {
  return status === 413 ? 'too-large' : status === 404 ? 'not-found' : status === 400 ? 'bad-request' : status === 415 ? 'unsupported-media-type' : status >= 500 ? 'internal' : 'refused';
}

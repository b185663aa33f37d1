// Renders a page inside the layout with the current viewer; the one way routes produce HTML.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { unreadCount } from '../features/messages/read-state.service.ts';
import type { Ctx } from './env.ts';
import { Layout, type Viewer } from './views/layout.tsx';

/** Renders `body` as a full page for the current session (if any). */
export async function render(c: Ctx, title: string, body: Child, status: ContentfulStatusCode = 200): Promise<Response> {
  const session = c.get('session');
  const viewer: Viewer | undefined =
    session?.stage === 'full'
      ? { username: session.account.username, role: session.account.role, unread: await bellCount(c, session.account.id) }
      : undefined;
  return c.html(
    <Layout title={title} viewer={viewer} csrf={session?.csrfToken}>
      {body}
    </Layout>,
    status,
  );
}

/** The bell's unread count; a failing count hides the bell rather than failing the page (error pages render here too). */
async function bellCount(c: Ctx, accountId: string): Promise<number | undefined> {
  const deps = c.get('deps');
  if (!deps) return undefined;
  try {
    return await unreadCount(deps, accountId);
  } catch (err) {
    deps.log.error({ err }, 'unread count failed');
    return undefined;
  }
}

/** A plain error page with a status code; never a stack trace. */
export function errorPage(c: Ctx, status: ContentfulStatusCode, title: string, message: string): Promise<Response> {
  return render(
    c,
    title,
    <p class="lead">
      {message} <a href="/">Go to the home page</a>.
    </p>,
    status,
  );
}

// Renders a page inside the layout with the current viewer; the one way routes produce HTML.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Ctx } from './env.ts';
import { CsrfContext } from './views/components.tsx';
import { renderLayout, type Viewer } from './views/layout.tsx';

/** Renders `body` as a full page for the current session (if any). */
export async function render(c: Ctx, title: string, body: Child, status: ContentfulStatusCode = 200): Promise<Response> {
  // The body renders inside the form-token context, as it would inside <Layout>. (Pages use no Suspense or
  // ErrorBoundary, whose deferred parts a plain string would not carry.)
  const bodyHtml = await (<CsrfContext.Provider value={c.get('session')?.csrfToken}>{body}</CsrfContext.Provider>).toString();
  return renderHtml(c, title, bodyHtml, status);
}

/** Like render(), for a body that is HTML already (a precompiled template's output, see views/template.ts). */
export function renderHtml(c: Ctx, title: string, bodyHtml: string, status: ContentfulStatusCode = 200): Response {
  const session = c.get('session');
  const viewer: Viewer | undefined =
    session?.stage === 'full'
      ? { username: session.account.username, role: session.account.role, unread: session.unread }
      : undefined;
  return c.html(renderLayout({ title, viewer, csrf: session?.csrfToken }, bodyHtml), status);
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

// Renders a page inside the layout for the current viewer; the one way routes produce HTML.
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import { problem } from './problem.ts';
import type { Ctx } from './env.ts';
import { isApiPath } from './gate.ts';
import { CEREMONY_CSP } from './csp.ts';
import { Layout, type Viewer } from './views/layout.tsx';

/**
 * Renders `body` as a full page: the layout shows a fully signed-in viewer their name, role and (unless `bell` is
 * false) unread count, asked of the context's `unreadCount` here unless the page already counted it (`unread`). A page
 * that runs a WebAuthn ceremony (`ceremony`) loads the ceremony script, and only such a page's policy allows it.
 */
export async function render(
  c: Ctx,
  title: string,
  body: Child,
  status: ContentfulStatusCode = 200,
  options: { bell?: boolean; unread?: number; ceremony?: boolean } = {},
): Promise<Response> {
  const session = c.get('session');
  let viewer: Viewer | undefined;
  if (session?.stage === 'full') {
    const { id, username, role } = session.account;
    const count = c.get('unreadCount');
    viewer = { username, role, unread: options.bell === false ? undefined : (options.unread ?? (await count?.(id))) };
  }
  let script: { src: string; integrity: string } | undefined;
  if (options.ceremony) {
    const built = c.get('ceremonyScript');
    if (!built) throw new Error('a ceremony page needs the ceremony script on the context (app.ts sets it)');
    script = { src: built.href, integrity: built.integrity };
    c.header('Content-Security-Policy', CEREMONY_CSP);
  }
  return c.html(
    <Layout title={title} viewer={viewer} csrf={session?.csrfToken} path={c.req.path} script={script}>
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

/** How long a client is asked to wait before trying again while the database is unavailable (seconds). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The answer to a request the database could not serve (isDatabaseUnavailable: down, restarting, unreachable): a plain
 * 503 page, or on /api/ a 503 problem, both with Retry-After; nothing in it reads the database. Logged as one short
 * warning per request, without a stack: an outage is no bug.
 */
export function databaseUnavailable(c: Ctx, log: Logger, err: unknown): Promise<Response> {
  log.warn(
    { path: c.req.path, method: c.req.method, error: err instanceof Error ? err.message : String(err) },
    'request failed: database unavailable',
  );
  const retryAfter = String(DATABASE_RETRY_AFTER_SECONDS);
  if (isApiPath(c.req.path)) {
    return Promise.resolve(
      problem(
        c,
        503,
        'database-unavailable',
        'The database is unavailable at the moment; try again in a few seconds.',
        { headers: { 'Retry-After': retryAfter } },
      ),
    );
  }
  c.header('Retry-After', retryAfter);
  return errorPage(
    c,
    503,
    'Database unavailable',
    'The database is unavailable at the moment, so this page cannot be shown. Try again in a few seconds.',
  );
}

/** The problem type of an error page's status, for the same condition met on /api/. */
function problemTypeOf(status: number): string {
  return status === 413
    ? 'too-large'
    : status === 404
      ? 'not-found'
      : status === 400
        ? 'bad-request'
        : status === 415
          ? 'unsupported-media-type'
          : status >= 500
            ? 'internal'
            : 'refused';
}

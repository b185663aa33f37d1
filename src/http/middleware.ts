// The page path's steps, each one Hono middleware, registered in order in app.ts: request log, the path's access class,
// security headers, body limit, session, API token, gate, form parsing and CSRF.
import crypto from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { matchedRoutes } from 'hono/route';
import { secureHeaders } from 'hono/secure-headers';
import type { Deps } from '../deps.ts';
import { safeEqual } from '../deps.ts';
import { problem } from './problem.ts';
import { readSessionCookie } from './cookies.ts';
import type { ApiAccount, AppEnv, Ctx, SessionContext } from './env.ts';
import { CSP_DIRECTIVES } from './csp.ts';
import { accessFor, API_MOUNT, isApiPath, isServerPost } from './gate.ts';
import { clientAddress, externalOrigin } from './request.ts';
import { errorPage } from './render.tsx';

/**
 * One JSON line per request at info (method, route template, status, duration, request id, and the URL with tokens
 * redacted), the same figures counted for /metrics, and the request id in an X-Request-Id response header.
 */
export function requestLog(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = crypto.randomUUID();
    c.header('X-Request-Id', requestId);
    await next();
    const seconds = (performance.now() - started) / 1000;
    const route = c.get('route') ?? routeTemplate(c);
    const { method } = c.req;
    const status = c.res.status;
    deps.metrics?.httpRequest(method, route, status, seconds);
    const url = new URL(c.req.url);
    deps.log.info(
      {
        requestId,
        method,
        route,
        status,
        durationMs: Math.round(seconds * 10_000) / 10,
        url: redactTokens(url.pathname + url.search),
      },
      'request',
    );
  };
}

/**
 * The template of the route that answered (`/settings/channels/:id`, never the raw URL); when a middleware answered
 * instead (a redirect to sign-in, a refused form), the route the request was headed for; "unmatched" when none exists.
 */
export function routeTemplate(c: Ctx): string {
  const routes = matchedRoutes(c);
  const answered = routes[c.req.routeIndex];
  // app.use() middleware is registered for every method ('ALL'); routes are registered for theirs, except the lazily
  // built JSON API, mounted for every method at API_MOUNT (a request the gate refused there is counted under it).
  const route =
    answered && answered.method !== 'ALL'
      ? answered
      : (routes.find((r) => r.method !== 'ALL') ?? routes.find((r) => r.path === API_MOUNT));
  return route ? withoutPatterns(route.path) : 'unmatched';
}

/**
 * A route path without its parameters' patterns, which may nest braces: `/messages/:id{[a-z]{1,64}}` → `/messages/:id`.
 */
function withoutPatterns(path: string): string {
  let out = '';
  let depth = 0;
  for (const ch of path) {
    if (ch === '{') depth++;
    else if (ch === '}' && depth > 0) depth--;
    else if (depth === 0) out += ch;
  }
  return out;
}

/**
 * Names of query parameters whose values are credentials (setup, invitation and reset tokens; an SSO callback's code).
 */
const SECRET_NAME = /^[\w.-]*(?:token|code)$/i;
/** One query parameter: separator, name as sent, and "=value" when it has one. */
const QUERY_PARAM = /([?&])([^&=#]*)(=[^&#]*)?/g;

/**
 * A path and query with every token-like query value replaced by "[redacted]", for log lines. Names are judged as the
 * router reads them (percent-decoded, so `?%74oken=` is a token too); a name that does not decode is redacted.
 */
export function redactTokens(pathAndQuery: string): string {
  const start = pathAndQuery.indexOf('?');
  if (start === -1) return pathAndQuery;
  const query = pathAndQuery
    .slice(start)
    .replace(QUERY_PARAM, (param: string, sep: string, name: string, value?: string) =>
      value !== undefined && isSecretName(name) ? `${sep}${name}=[redacted]` : param,
    );
  return pathAndQuery.slice(0, start) + query;
}

function isSecretName(name: string): boolean {
  try {
    return SECRET_NAME.test(decodeURIComponent(name.replace(/\+/g, ' ')));
  } catch {
    return true;
  }
}

/**
 * Every response's security headers: CSP without any script, no framing, nosniff, a same-origin referrer policy, HSTS
 * when users arrive over HTTPS, and no caching of pages. A header the route set itself is kept (pages carrying tokens
 * in their URL tighten the referrer policy, static assets are cacheable).
 */
export function securityHeaders(secure: boolean): MiddlewareHandler<AppEnv> {
  const headers = secureHeaders({
    contentSecurityPolicy: CSP_DIRECTIVES,
    referrerPolicy: 'same-origin',
    strictTransportSecurity: secure ? 'max-age=31536000' : false,
    xFrameOptions: 'DENY',
    overwrite: false,
  });
  return (c, next) => headers(c, () => noStore(c, next));
}

/**
 * The referrer policy of a page whose URL holds a token (setup, invitation, password reset, an SSO callback's code):
 * `strict-origin` sends only this service's origin in a Referer, never the path or query, so the token is not repeated
 * in the Referer of the page's stylesheet or links (to a reverse proxy's log) nor sent to another site. Not
 * `no-referrer`: a form posted from the page would then carry `Origin: null`, and a browser that sends no Fetch
 * Metadata (Safari before 16.4) would be refused as cross-site by formAndCsrf.
 */
export const TOKEN_PAGE_REFERRER_POLICY = 'strict-origin';

/**
 * Pages hold per-user content and form tokens: Cache-Control no-store unless the route sets its own. Set before the
 * route, so every response the context builds carries a Headers object that later additions stay in (under
 * @hono/node-server, headers added to a response built from plain values are lost when Hono answers HEAD from it or
 * its body is read first). A response built by hand gets it afterwards, on a copy if its headers are immutable.
 */
async function noStore(c: Ctx, next: () => Promise<void>): Promise<void> {
  c.header('Cache-Control', 'no-store');
  await next();
  const value = c.res.headers.get('cache-control') ?? 'no-store';
  try {
    c.res.headers.set('cache-control', value);
  } catch {
    // Response.redirect() and fetch results have immutable headers: answer with a copy secureHeaders can add to.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set('cache-control', value);
  }
}

/**
 * Decides once what the path requires (gate.ts's table) and keeps it on the context, where every later step reads it.
 */
export function classifyAccess(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('access', accessFor(c.req.method, c.req.path));
    await next();
  };
}

/** How a session cookie's value becomes the session and its account (the auth feature's resolveSession). */
export type ResolveSession = (deps: Deps, cookie: string) => Promise<SessionContext | undefined>;

/** Loads the session named by the cookie, through `resolveSession` (role read from the account row, every request). */
export function loadSession(deps: Deps, resolveSession: ResolveSession): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // API requests authenticate by bearer token only; static assets need no one.
    const path = c.req.path;
    const cookie = isApiPath(path) || path.startsWith('/static/') ? undefined : readSessionCookie(c, deps.config);
    c.set('session', cookie ? await resolveSession(deps, cookie) : undefined);
    await next();
  };
}

/**
 * How a bearer token sent from an address becomes its account (the tokens feature's authenticateBearer): refused as
 * unknown, or as throttled when that address sent too many bad tokens.
 */
export type AuthenticateBearer = (
  deps: Deps,
  token: string,
  address: string,
) => Promise<
  | { ok: true; account: ApiAccount }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterMs: number }
>;

/**
 * On /api/ only: resolves `Authorization: Bearer <token>` to its account through `authenticateBearer` (role read from
 * the row, every request). An address that sent too many bad tokens is answered 429 with Retry-After before its token
 * is looked up.
 */
export function loadApiAccount(deps: Deps, authenticateBearer: AuthenticateBearer): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('apiAccount', undefined);
    const path = c.req.path;
    const bearer =
      isApiPath(path) && c.get('access') !== 'public'
        ? /^Bearer +(\S+) *$/i.exec(c.req.header('authorization') ?? '')
        : null;
    if (bearer) {
      const result = await authenticateBearer(deps, bearer[1]!, clientAddress(c));
      if (!result.ok && result.reason === 'throttled') {
        const seconds = String(Math.ceil(result.retryAfterMs / 1000));
        return problem(
          c,
          429,
          'too-many-bad-tokens',
          `Too many unknown tokens came from this address. Try again in ${seconds} seconds.`,
          { headers: { 'Retry-After': seconds } },
        );
      }
      if (result.ok) c.set('apiAccount', result.account);
    }
    await next();
  };
}

/** Methods a read-only token may use. */
const READ_ONLY_METHODS = new Set(['GET', 'HEAD']);

/**
 * Enforces gate.ts: anonymous to /login, pending sessions to their step, viewers 403 on admin routes (every write
 * outside the self-service list), /api/ bearer-only with the same rule for a viewer's token.
 */
export function enforceGate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get('access');
    const session = c.get('session');
    if (access === 'public') return next();
    if (access === 'api' || access === 'api-admin') {
      const account = c.get('apiAccount');
      if (!account) {
        const detail =
          'Send a personal API token as "Authorization: Bearer svc_pat_…"; this one is missing, unknown, expired or revoked, or its account is suspended.';
        return problem(c, 401, 'unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="svc"' } });
      }
      if (account.readOnly && !READ_ONLY_METHODS.has(c.req.method))
        return problem(c, 403, 'read-only-token', 'This token is read-only: it may only read (GET).');
      if (access === 'api-admin' && account.role !== 'admin')
        return problem(c, 403, 'admin-only', 'This action is for administrators.');
      return next();
    }
    if (!session) return c.redirect('/login', 303);
    if (session.stage !== 'full') {
      if (access === 'pending') return next();
      return c.redirect(session.stage === 'totp' ? '/login/totp' : '/login/enrol', 303);
    }
    if (access === 'admin' && session.account.role !== 'admin') {
      const what = c.req.method === 'GET' || c.req.method === 'HEAD' ? 'page' : 'action';
      return errorPage(c, 403, 'Not allowed', `This ${what} is for administrators.`);
    }
    return next();
  };
}

/**
 * Refuses a request body over `maxBytes` with 413 and `Connection: close`: from Content-Length before the body is
 * touched, and while reading a chunked body. The unread rest of the body would otherwise sit on a socket the client
 * believes is kept alive (the adapter destroys it after a 500 ms drain), so the answer says the connection ends.
 */
export function limitBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = async (c: Ctx) => {
    const res = await errorPage(c, 413, 'Too large', 'That request was larger than this service accepts.');
    res.headers.set('Connection', 'close');
    return res;
  };
  const whileReading = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return (c, next) => {
    // Requests that carry no body pass untouched (asking a GET for its body would build a full Request).
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const declared = c.req.header('content-length');
    // A declared length decides before anything is read; a chunked body (or an odd header) is counted as it arrives.
    if (declared !== undefined && /^\d+$/.test(declared) && c.req.header('transfer-encoding') === undefined) {
      return Number(declared) > maxBytes ? tooLarge(c) : next();
    }
    return whileReading(c, next);
  };
}

/**
 * Refuses cross-site posts and, for sessions, posts without the session's form token; parses the form once. The API
 * (bearer tokens) and server-to-server posts (gate.ts) read their own bodies.
 */
export function formAndCsrf(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { method, path } = c.req;
    if (method === 'GET' || method === 'HEAD' || isApiPath(path) || isServerPost(method, path)) return next();
    const site = c.req.header('sec-fetch-site');
    const origin = c.req.header('origin');
    // Fetch metadata decides when the browser sends it; otherwise the Origin header must be ours (a page that sets
    // no-referrer makes it "null": see TOKEN_PAGE_REFERRER_POLICY). Clients sending neither still need the session's
    // form token.
    const crossSite =
      site !== undefined ? site !== 'same-origin' : origin !== undefined && origin !== externalOrigin(c, deps.config);
    if (crossSite) {
      return errorPage(c, 403, 'Request refused', 'This form was submitted from another site.');
    }
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      return errorPage(c, 415, 'Unsupported form', 'Forms must be sent as application/x-www-form-urlencoded.');
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer());
    } catch {
      // The body limit has already read (and bounded) the body before this step: what fails here is its bytes.
      return errorPage(c, 400, 'Unreadable form', 'The form contained bytes that are not valid UTF-8.');
    }
    const form = new URLSearchParams(text);
    // Malformed percent-escapes decode to U+FFFD: refuse them rather than store mangled text.
    if ([...form.values()].some((v) => v.includes('\uFFFD'))) {
      return errorPage(c, 400, 'Unreadable form', 'The form contained bytes that are not valid UTF-8.');
    }
    const session = c.get('session');
    if (session && !safeEqual(form.get('_csrf') ?? '', session.csrfToken)) {
      return errorPage(c, 403, 'Form expired', 'This form is out of date. Go back, reload the page and try again.');
    }
    c.set('form', form);
    await next();
  };
}

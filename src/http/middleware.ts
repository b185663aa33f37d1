// The middleware chain: headers, session, gate, form parsing and CSRF. Order matters; see app.ts.
import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler, Next } from 'hono';
import type { Deps } from '../deps.ts';
import { safeEqual } from '../deps.ts';
import { resolveSession } from '../features/auth/sessions.service.ts';
import { authenticateToken } from '../features/tokens/tokens.service.ts';
import { readSessionCookie } from './cookies.ts';
import type { AppEnv, Ctx } from './env.ts';
import { accessFor } from './gate.ts';
import { externalOrigin } from './request.ts';
import { errorPage } from './render.tsx';

/** Content-Security-Policy: no script at all, styles and images from here only, no framing, forms post only here. */
const CSP = [
  "default-src 'self'",
  "script-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/**
 * Every response's security headers, in the order they are sent. Names are lowercase, as Node keys them (header names
 * are case-insensitive): a name that needs no lowercasing costs nothing more per request.
 */
export function securityHeaderTable(secure: boolean): readonly (readonly [string, string])[] {
  return [
    ['content-security-policy', CSP],
    ['cross-origin-opener-policy', 'same-origin'],
    ['cross-origin-resource-policy', 'same-origin'],
    ['origin-agent-cluster', '?1'],
    ['referrer-policy', 'same-origin'],
    // Only when the operator says users arrive over HTTPS.
    ...(secure ? [['strict-transport-security', 'max-age=31536000'] as const] : []),
    ['x-content-type-options', 'nosniff'],
    ['x-dns-prefetch-control', 'off'],
    ['x-download-options', 'noopen'],
    ['x-frame-options', 'DENY'],
    ['x-permitted-cross-domain-policies', 'none'],
    ['x-xss-protection', '0'],
    // Pages hold per-user content and form tokens; static assets override this.
    ['cache-control', 'no-store'],
  ];
}

/**
 * CSP without inline script, no framing, nosniff, a strict referrer policy, and no caching of pages, on every
 * response; a route may override one (pages carrying tokens in their URL tighten the referrer policy, static assets
 * are cacheable). Under the Node server they are set on the outgoing response before the route runs: Node merges the
 * route's own headers over them when the response is written, whatever the route returned (a page, a redirect, a
 * response built by hand), and the route's response never has to carry or rebuild them. Elsewhere (app.request in
 * tests, other runtimes) they are set on the context before the route, and a response built by hand gets the
 * missing ones on a copy afterwards.
 */
export function securityHeaders(secure: boolean): MiddlewareHandler<AppEnv> {
  const table = securityHeaderTable(secure);
  return (c, next) => {
    const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
    if (outgoing) {
      for (const [name, value] of table) outgoing.setHeader(name, value);
      return next();
    }
    return throughContext(c, next);
  };

  async function throughContext(c: Ctx, next: Next): Promise<void> {
    for (const [name, value] of table) c.header(name, value);
    await next();
    // Built through the context: it carries the whole set (all were set together; routes only override).
    if (c.res.headers.get('content-security-policy') === CSP) return;
    const missing = table.filter(([name]) => !c.res.headers.has(name));
    if (missing.length === 0) return;
    // A copy, since a response made elsewhere (Response.redirect, a fetch result) may have immutable headers.
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of missing) c.res.headers.set(name, value);
  }
}

/** A middleware step: like Hono's middleware, but it may answer with a response synchronously. */
export type Step = (c: Ctx, next: Next) => Promise<Response | void> | Response;

/**
 * Runs `steps` in order as ONE Hono middleware: each step continues through `next`, answers with a response, or
 * awaits. Under Hono's own compose every layer costs promises on every request; here a step that finishes
 * synchronously costs none. As under compose, a response a step answers with becomes the context's response
 * before the step before it resumes. Unlike compose, which answers an error at the layer that threw it (setting
 * c.error for the layers around it), what a step throws passes through the steps before it, which may catch it, to
 * the app's error handler; no step here looks at c.error.
 */
export function chain(...steps: Step[]): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    let index = -1;
    // As compose does: any response object is taken (a native one from fetch or Response.redirect included), unless
    // the later steps already finalized one.
    const adopt = (res: Response | void) => {
      if (res && !c.finalized) c.res = res;
    };
    const run = (i: number): Promise<void> => {
      if (i <= index) throw new Error('next() called multiple times');
      index = i;
      if (i === steps.length) return next();
      let inner: Promise<void> | undefined;
      const out = steps[i]!(c, () => (inner = run(i + 1)));
      // Passed through untouched: whatever the later steps answered is on the context already.
      if (out === inner) return out as Promise<void>;
      if (typeof (out as Promise<unknown> | undefined)?.then === 'function') return (out as Promise<Response | void>).then(adopt);
      adopt(out as Response | void);
      return Promise.resolve();
    };
    return run(0);
  };
}

/** Loads the session named by the cookie (role read from the account row, every request). */
export function loadSession(deps: Deps): MiddlewareHandler<AppEnv> {
  // Plain functions rather than async ones on these per-request paths: each async layer costs a promise more.
  return (c, next) => {
    // API requests authenticate by bearer token only; static assets need no one.
    const path = c.req.path;
    const cookie = accessFor(path) === 'api' || path.startsWith('/static/') ? undefined : readSessionCookie(c, deps.config);
    if (!cookie) {
      c.set('session', undefined);
      return next();
    }
    const session = resolveSession(deps, cookie);
    if (session instanceof Promise) {
      return session.then((resolved) => {
        c.set('session', resolved);
        return next();
      });
    }
    c.set('session', session);
    return next();
  };
}

/** On /api/ only: resolves `Authorization: Bearer <token>` to its account (role read from the row, every request). */
export function loadApiAccount(deps: Deps): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    c.set('apiAccount', undefined);
    if (accessFor(c.req.path) !== 'api') return next();
    const bearer = /^Bearer +(\S+) *$/i.exec(c.req.header('authorization') ?? '');
    if (!bearer) return next();
    return authenticateToken(deps, bearer[1]!).then((account) => {
      c.set('apiAccount', account);
      return next();
    });
  };
}

/** Enforces gate.ts: anonymous to /login, pending sessions to their step, viewers 403 on admin prefixes, /api/ bearer-only. */
export function enforceGate(): Step {
  return (c, next) => {
    const access = accessFor(c.req.path);
    const session = c.get('session');
    if (access === 'public') return next();
    if (access === 'api') {
      if (c.get('apiAccount')) return next();
      return c.json({ error: 'unauthorized' }, 401, { 'WWW-Authenticate': 'Bearer realm="svc"' });
    }
    if (!session) return c.redirect('/login', 303);
    if (session.stage !== 'full') {
      if (access === 'pending') return next();
      return c.redirect(session.stage === 'totp' ? '/login/totp' : '/login/enrol', 303);
    }
    if (access === 'admin' && session.account.role !== 'admin') {
      return errorPage(c, 403, 'Not allowed', 'This page is for administrators.');
    }
    return next();
  };
}

/** Refuses cross-site posts and, for sessions, posts without the session's form token; parses the form once. */
export function formAndCsrf(deps: Deps): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || accessFor(c.req.path) === 'api') return next();
    return checkForm(c, next);
  };

  async function checkForm(c: Ctx, next: Next): Promise<Response | void> {
    const site = c.req.header('sec-fetch-site');
    const origin = c.req.header('origin');
    // Fetch metadata decides when the browser sends it (pages with no-referrer make Origin "null");
    // otherwise the Origin header must be ours. Clients sending neither still need the session's form token.
    const crossSite = site !== undefined ? site !== 'same-origin' : origin !== undefined && origin !== externalOrigin(c, deps.config);
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
    return next();
  }
}

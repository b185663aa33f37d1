// RFC 9457 problem details: the one form every /api/ refusal takes, whether the gate, the body limit, a route or the
// error handler answers. Kept apart from api.ts so the page path answers API refusals without loading the OpenAPI
// machinery (which app.ts loads only when the first /api/ request arrives).
import type { TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Ctx } from './env.ts';

/** Prefix of every problem `type`: a URN, so the type names the refusal without pointing at a host. */
export const PROBLEM_TYPE_PREFIX = 'urn:svc:problem:';
/** The media type of every error answer. */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/**
 * One field a request got wrong: where it was, its name or dotted path, and why (schema: FieldErrorSchema in api.ts).
 */
export interface FieldError {
  in: 'body' | 'query' | 'path' | 'header';
  field: string;
  detail: string;
}

/** Titles per status: the same for every occurrence of a type, as RFC 9457 asks. */
const TITLES: Partial<Record<number, string>> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Content too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Bad gateway',
  503: 'Service unavailable',
};

/**
 * A problem answer. Typed as fitting any typed route response: every apiRoute() documents the problems it answers
 * (the standard ones and its `refusals`), and the contract test checks each answer against that document.
 */
// biome-ignore lint/suspicious/noExplicitAny: any typed JSON response of a route, whatever its status and body
export type ProblemResponse = Response & TypedResponse<any, any, any>;

/** A problem-details answer: `type` is the refusal's stable slug (prefixed here), `detail` says what to do. */
export function problem(
  c: Ctx,
  status: ContentfulStatusCode,
  type: string,
  detail: string,
  extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
): ProblemResponse {
  const body = {
    type: PROBLEM_TYPE_PREFIX + type,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    ...(extra.errors ? { errors: extra.errors } : {}),
  };
  return c.body(JSON.stringify(body), status, {
    'Content-Type': PROBLEM_MEDIA_TYPE,
    ...extra.headers,
  }) as ProblemResponse;
}

/**
 * 422 with one entry per field, for a domain's own validation (the same messages the console shows beside its fields).
 */
export function invalid(
  c: Ctx,
  errors: Record<string, string | undefined>,
  where: FieldError['in'] = 'body',
): ProblemResponse {
  const list = Object.entries(errors).flatMap(([field, detail]) => (detail ? [{ in: where, field, detail }] : []));
  return problem(c, 422, 'invalid', 'Some fields are not valid: see errors.', { errors: list });
}

/** Hono's path template `/api/channels/:id` as a pattern matching the concrete paths it serves. */
function templatePattern(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/**
 * The answer for an /api/ request no route took: 405 with `Allow` when the path exists under other methods, else 404.
 * `routes` is the app's route list (Hono's app.routes).
 */
export function apiNotFound(c: Ctx, routes: { method: string; path: string }[]): Response {
  const allowed = new Set<string>();
  for (const r of routes) {
    if (r.method === 'ALL' || !r.path.startsWith('/api/') || !templatePattern(r.path).test(c.req.path)) continue;
    allowed.add(r.method);
    if (r.method === 'GET') allowed.add('HEAD');
  }
  if (allowed.size === 0) return problem(c, 404, 'not-found', 'There is nothing at this address.');
  return problem(c, 405, 'method-not-allowed', `This address answers ${[...allowed].sort().join(', ')}.`, {
    headers: { Allow: [...allowed].sort().join(', ') },
  });
}

// What every JSON API route shares: RFC 9457 problem details, the validation hook, the JSON-only body rule, the
// standard refusals each operation documents, cursor paging and time stamps. Feature files build their routes with
// apiRoute() on an apiApp() and map their domain's refusals to problems in one table each.
import { createRoute, OpenAPIHono, z, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { ZodError } from 'zod';
import '../zod-messages.ts';
import type { ApiAccount, AppEnv, Ctx } from './env.ts';
import { accessFor } from './gate.ts';
import { ID_PATTERN, isId } from './text.ts';
import { invalid, PROBLEM_MEDIA_TYPE, problem, type FieldError, type ProblemResponse } from './problem.ts';

export { invalid, problem, type FieldError } from './problem.ts';

/** One field a request got wrong: where it was (body, query, path, header), its name or dotted path, and why. */
export const FieldErrorSchema = z
  .strictObject({
    in: z.enum(['body', 'query', 'path', 'header']),
    field: z.string().openapi({ example: 'url' }),
    detail: z.string().openapi({ example: 'Enter an https:// address.' }),
  })
  .openapi('FieldError');

/** RFC 9457 problem details; `type` is stable per refusal and what a client should branch on. */
export const ProblemSchema = z
  .strictObject({
    type: z.string().openapi({ example: 'urn:svc:problem:last-admin' }),
    title: z.string().openapi({ example: 'Conflict' }),
    status: z.number().int(),
    detail: z.string().openapi({ example: 'Promote another account to admin first.' }),
    errors: z.array(FieldErrorSchema).optional(),
  })
  .openapi('Problem');

/** zod's issues as field errors. */
function fieldErrors(error: ZodError, where: FieldError['in']): FieldError[] {
  return error.issues.map((issue) => ({
    in: where,
    field: issue.path.map(String).join('.') || '(body)',
    detail: issue.message,
  }));
}

const TARGETS: Record<string, FieldError['in']> = { json: 'body', query: 'query', param: 'path', header: 'header' };

/** An OpenAPIHono for one feature's API routes: a request its schemas refuse answers 422 with one entry per field. */
export function apiApp() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      // An id in the path that cannot exist is simply not there.
      if (result.target === 'param') return problem(c as Ctx, 404, 'not-found', 'There is nothing at this address.');
      return problem(c as Ctx, 422, 'invalid', 'Some fields are not valid: see errors.', {
        errors: fieldErrors(result.error, TARGETS[result.target] ?? 'body'),
      });
    },
  });
}

/**
 * The account the bearer token acts as: the gate has refused every request without one, except on the public document
 * (/api/openapi.json), where calling this throws.
 */
export function apiAccount(c: Ctx): ApiAccount {
  const account = c.get('apiAccount');
  if (!account)
    throw new Error(
      `apiAccount() on ${c.req.method} ${c.req.path} found no token's account: the gate lets this path through without one`,
    );
  return account;
}

const problemContent = (description: string) => ({
  description,
  content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemSchema } },
});

/**
 * The refusals every operation of its kind can answer, so the document lists them without each route repeating them.
 */
function standardRefusals(config: { method: string; path: string; hasParams: boolean }) {
  const write = config.method !== 'get';
  // Whom the gate refuses is the gate's to say (gate.ts): an admin-only read documents its 403 too.
  const admin = accessFor(config.method.toUpperCase(), config.path) === 'api-admin';
  return {
    // apiApp's hook answers a path parameter that cannot name anything with 404.
    ...(config.hasParams ? { 404: problemContent('Nothing has this id.') } : {}),
    401: problemContent('No token, or a token that is unknown, expired, revoked, or whose account is suspended.'),
    ...(admin || write ? { 403: problemContent('The account is not an admin, or the token is read-only.') } : {}),
    ...(write
      ? {
          400: problemContent('The body is not valid JSON.'),
          413: problemContent('The body is over 64 KiB.'),
          415: problemContent('The body is not application/json.'),
        }
      : {}),
    // Any operation: a query parameter holding a NUL is refused before routing (apiInput).
    422: problemContent('A field is missing or not valid; `errors` has one entry per field.'),
    429: problemContent('Too many bad tokens from this address; `Retry-After` says when to try again.'),
    503: problemContent(
      'The database is unavailable (stopped, restarting or unreachable); `Retry-After` says when to try again.',
    ),
  };
}

/**
 * createRoute() with the API's conventions: bearer authentication, the standard refusals added to `responses`, and
 * `refusals` (status → description) for the operation's own problems.
 */
export function apiRoute<R extends Omit<RouteConfig, 'responses'> & { responses: RouteConfig['responses'] }>(
  config: R & { refusals?: Partial<Record<400 | 403 | 404 | 409 | 413 | 422 | 502, string>> },
) {
  const { refusals = {}, ...route } = config;
  const own = Object.fromEntries(
    Object.entries(refusals).map(([status, description]) => [status, problemContent(description!)]),
  );
  return createRoute({
    ...route,
    security: [{ token: [] }],
    responses: {
      ...standardRefusals({ method: route.method, path: route.path, hasParams: route.request?.params !== undefined }),
      ...own,
      ...route.responses,
    },
  } as unknown as R);
}

/** A JSON request body for apiRoute's `request.body`. */
export function jsonBody<S extends z.ZodType>(schema: S, description?: string) {
  return { required: true, description, content: { 'application/json': { schema } } };
}

/** A JSON answer for apiRoute's `responses`. */
export function jsonAnswer<S extends z.ZodType>(schema: S, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** A row id in the path; one that cannot be a row id answers 404 (apiApp's hook) without a lookup. */
export const IdParam = z.object({
  id: z
    .string()
    .regex(ID_PATTERN)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/**
 * The id of an idempotent delete: any id is accepted, since one that cannot exist is as gone as one deleted before
 * (the handler looks up only an isId() one).
 */
export const AnyIdParam = z.object({
  id: z
    .string()
    .max(256)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** Query parameters of every cursor-paged list. */
export const PageQuery = z.object({
  cursor: z
    .string()
    .max(200)
    .optional()
    .openapi({ description: 'The `next_cursor` of the previous page; absent for the first page.' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(50)
    .openapi({ description: 'Items per page, 1 to 100 (default 50).' }),
});

/** A page of `item`s with the cursor of the next page (null on the last one). */
export function pageOf<S extends z.ZodType>(item: S) {
  return z.strictObject({ items: z.array(item), next_cursor: z.string().nullable() });
}

/** Cursor paging over keyset values: opaque base64url JSON, so clients never build or parse one. */
export function encodeCursor(values: unknown[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/** The values of a cursor made by encodeCursor, or undefined when it is not one (answer 422 on field `cursor`). */
export function decodeCursor(raw: string): unknown[] | undefined {
  try {
    const values: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    return Array.isArray(values) ? values : undefined;
  } catch {
    return undefined;
  }
}

/** A position in a list ordered by a time (ms) and an id, as its cursors carry it. */
export interface TimeIdPosition {
  at: number;
  id: string;
}

/**
 * The position a cursor of a (time, id)-ordered list names, or null when no such list handed it out (answer
 * badCursor). Only values such a list could have written pass, so nothing odd reaches the database.
 */
export function timeIdCursor(raw: string): TimeIdPosition | null {
  const values = decodeCursor(raw);
  if (values?.length !== 2) return null;
  const [at, id] = values;
  return Number.isSafeInteger(at) && isId(id as string) ? { at: at as number, id: id as string } : null;
}

/** The cursor after a row of a (time, id)-ordered list. */
export function timeIdCursorOf(at: number, id: string): string {
  return encodeCursor([at, id]);
}

/**
 * A page of a (time, id)-ordered list fetched with one row more than `limit`: the first `limit` rows, and the cursor
 * after the last one shown when the extra row says there is more.
 */
export function pageFrom<R>(
  rows: R[],
  limit: number,
  positionOf: (row: R) => TimeIdPosition,
): { rows: R[]; next_cursor: string | null } {
  if (rows.length <= limit) return { rows, next_cursor: null };
  const shown = rows.slice(0, limit);
  const last = positionOf(shown[shown.length - 1]!);
  return { rows: shown, next_cursor: timeIdCursorOf(last.at, last.id) };
}

/** 422 for a cursor this API did not hand out. */
export function badCursor(c: Ctx): ProblemResponse {
  return invalid(c, { cursor: 'This cursor was not handed out by this list; start again without one.' }, 'query');
}

/** Milliseconds since the epoch as an RFC 3339 time stamp (the API's only time format); null stays null. */
export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** An RFC 3339 time stamp in a schema. */
export const Timestamp = z.string().datetime({ offset: true }).openapi({ example: '2026-01-15T12:00:00.000Z' });

/**
 * The API's input rules before any route's validator: a write's body must say `Content-Type: application/json` (else
 * 415) and hold valid JSON (else 400), nested at most MAX_DEPTH deep (else 422); no query value and no string in a
 * body (keys included) may hold a NUL or a lone UTF-16 surrogate (422 naming the field). PostgreSQL cannot store a
 * NUL at all, and a lone surrogate would be stored as U+FFFD (a secret then not the one sent), so no such value ever
 * reaches a route. Other control characters are each field's own rule, refused by the domain in its own words.
 */
export function apiInput(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const query = [...new URL(c.req.url).searchParams].flatMap(([name, value]) =>
      unstorable(name) || unstorable(value) ? [name] : [],
    );
    if (query.length > 0) return unstorableRefusal(c, 'query', query);
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return next();
    const text = await c.req.text();
    const declared = c.req.header('content-type');
    if (text.length === 0 && declared === undefined) return next();
    const type = (declared ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json')
      return problem(c, 415, 'unsupported-media-type', 'Send the body as application/json.');
    if (text.length === 0) return next();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return problem(c, 400, 'malformed-json', 'The body is not valid JSON.');
    }
    const found = unstorableFields(body);
    if (found === 'too-deep') return invalid(c, { '(body)': `The body is nested more than ${MAX_DEPTH} levels deep.` });
    if (found.length > 0) return unstorableRefusal(c, 'body', found);
    return next();
  };
}

/** No request body of this API nests deeper than a few levels; far deeper ones are refused before they are walked. */
const MAX_DEPTH = 32;

/** A NUL (PostgreSQL cannot store it) or a lone surrogate (not Unicode text). */
const unstorable = (text: string) => /[\u0000\p{Cs}]/u.test(text);

/** Dotted paths of the strings (or keys) in a JSON value that unstorable() refuses, walked without recursion. */
function unstorableFields(body: unknown): string[] | 'too-deep' {
  const found: string[] = [];
  const pending: { value: unknown; at: string; depth: number }[] = [{ value: body, at: '', depth: 0 }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { value, at, depth } = item;
    if (typeof value === 'string') {
      if (unstorable(value)) found.push(at || '(body)');
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_DEPTH) return 'too-deep';
      for (const [key, inner] of Object.entries(value)) {
        const path = at ? `${at}.${key}` : key;
        if (unstorable(key)) found.push(path);
        else pending.push({ value: inner, at: path, depth: depth + 1 });
      }
    }
  }
  return found.sort();
}

function unstorableRefusal(c: Ctx, where: FieldError['in'], fields: string[]): ProblemResponse {
  // The name is echoed with control characters and lone surrogates replaced, never as sent.
  const errors = fields.map((field) => ({
    in: where,
    field: field.replace(/[\u0000-\u001F\u007F\p{Cs}]/gu, '?'),
    detail: UNSTORABLE_MESSAGE,
  }));
  return problem(c, 422, 'invalid', 'Some fields are not valid: see errors.', { errors });
}

const UNSTORABLE_MESSAGE = 'This value cannot contain control characters or unpaired surrogates.';

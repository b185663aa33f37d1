// Refuses a query string holding control characters before a page reads it (PostgreSQL refuses NUL outright).
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import { errorPage } from './render.tsx';
import { hasControlCharacters } from './text.ts';

/** True when any query parameter's name or value holds a control character (tab aside). */
export function queryHasControlCharacters(url: string): boolean {
  for (const [key, value] of new URL(url).searchParams) {
    if (hasControlCharacters(key) || hasControlCharacters(value)) return true;
  }
  return false;
}

/** Route middleware for pages that read query parameters: a 400 page instead of a lookup with a bad value. */
export const refuseControlQuery: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!queryHasControlCharacters(c.req.url)) return next();
  if (c.req.path.startsWith('/api/')) return c.json({ error: 'query parameters cannot contain control characters' }, 400);
  return errorPage(c, 400, 'Address not valid', 'This address cannot contain control characters. Check the link.');
};

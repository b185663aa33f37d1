// Reading a page's query string: refuses one holding control characters before a page reads it (PostgreSQL refuses
// NUL outright), and reads a list's page number.
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
  if (c.req.path.startsWith('/api/'))
    return c.json({ error: 'query parameters cannot contain control characters' }, 400);
  return errorPage(c, 400, 'Address not valid', 'This address cannot contain control characters. Check the link.');
};

/**
 * The page number from a `page` query value: only 1 to 6 digits count (no "1.5", "1e400", "-1"), anything else is page
 * 1.
 */
export function parsePageNumber(raw: string | undefined): number {
  return raw !== undefined && /^\d{1,6}$/.test(raw) ? Number(raw) : 1;
}

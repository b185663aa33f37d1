// Where a form may send the browser back to (a `back` field): one function for every such field, so none of them can
// become an open redirect. The raw value is normalised the way a browser would read it before it is judged.

/**
 * The app's own pages a return address may name (their paths; any query is kept): the home page, the inbox and
 * message pages, Settings with its tabs, one channel's or one account's page, and Profile.
 */
export const APP_PAGES: readonly RegExp[] = [
  /^\/$/,
  /^\/inbox$/,
  /^\/messages(\/[A-Za-z0-9_-]{1,64})?$/,
  /^\/settings$/,
  /^\/settings\/(channels|accounts)\/[A-Za-z0-9_-]{1,64}$/,
  /^\/profile$/,
];

/** Longer than any address the app renders into a `back` field. */
const MAX_LENGTH = 2048;
/** Control characters (C0, DEL, C1): a browser drops tab and newline from a URL, which can turn `/\t/x` into `//x`. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Any origin will do: only whether the value stays on it matters. */
const PROBE = 'http://svc.invalid';

/**
 * The same-origin path (and query) `raw` names, when it is one of `pages`; else `fallback`. Judged after the parser a
 * browser uses has read it: backslashes count as slashes, dot segments (also percent-encoded ones) are resolved, and
 * the result must be a path on this origin with no empty segment (`//`) and no encoded slash or backslash, which a
 * browser or proxy could read as a slash later. Anything with a control character, a scheme (`https:`, `javascript:`)
 * or a host is refused outright. A query and a fragment are kept as the parser serialises them (percent-encoded).
 */
export function redirectTarget(
  raw: string | undefined,
  fallback: string,
  pages: readonly RegExp[] = APP_PAGES,
): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_LENGTH || CONTROL.test(raw)) return fallback;
  // Only a path: a scheme or a network path (`//host`, `\\host`, `/\host`) names somewhere else.
  const slashed = raw.replaceAll('\\', '/');
  if (!slashed.startsWith('/') || slashed.startsWith('//')) return fallback;
  let url: URL;
  try {
    url = new URL(slashed, PROBE);
  } catch {
    return fallback;
  }
  if (url.origin !== PROBE || url.username !== '' || url.password !== '') return fallback;
  const path = url.pathname;
  // `/.//x` and `/a/..//x` resolve to `//x`; an encoded slash or backslash may be decoded into one downstream.
  if (path.includes('//') || /%(2f|5c)/i.test(path)) return fallback;
  if (!pages.some((page) => page.test(path))) return fallback;
  return path + url.search + url.hash;
}

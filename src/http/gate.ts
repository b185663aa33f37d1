// The access gate: one default-deny table over path prefixes, applied before any route runs.
// A new route is signed-in-only unless listed public here, and admin-only whenever it sits under an admin prefix.

/** Paths that need no session. */
const PUBLIC_EXACT = new Set(['/login', '/setup', '/invite', '/healthz']);
/** Path prefixes that need no session (SSO sign-in flow, static assets). */
const PUBLIC_PREFIXES = ['/static/', '/login/sso/'];
/** Paths a half-signed-in session (owing a second factor or offered enrolment) may reach. */
const PENDING_EXACT = new Set(['/login/totp', '/login/enrol', '/logout']);
/** Every route under these prefixes requires the admin role (SPEC 4.2: the whole /settings screen). */
const ADMIN_PREFIXES = ['/settings'];
/** The JSON API: bearer tokens only, never cookies. */
const API_PREFIX = '/api/';

function under(path: string, prefix: string): boolean {
  return prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix || path.startsWith(prefix + '/');
}

export type Access = 'public' | 'pending' | 'api' | 'admin' | 'user';

/** Classifies a request path into the access it requires. */
export function accessFor(path: string): Access {
  if (path === '/api' || path.startsWith(API_PREFIX)) return 'api';
  if (PUBLIC_EXACT.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p))) return 'public';
  if (PENDING_EXACT.has(path)) return 'pending';
  if (ADMIN_PREFIXES.some((p) => under(path, p))) return 'admin';
  return 'user';
}

// The access gate: one default-deny table over methods and path prefixes, applied before any route runs.
// A new route is signed-in-only unless listed public here; a new state-changing route is admin-only unless listed as
// self-service here (admin acts may live outside /settings, such as POST /probers and POST /scans/trigger).

/** Paths that need no session (/metrics checks its own bearer token; a passkey sign-in is a sign-in). */
const PUBLIC_EXACT = new Set([
  '/login',
  '/login/passkey',
  '/login/passkey/options',
  '/setup',
  '/invite',
  '/reset',
  '/healthz',
  '/readyz',
  '/metrics',
]);
/** API paths anyone may read (GET and HEAD only): the OpenAPI document describes, never acts. */
const PUBLIC_API_READS = new Set(['/api/openapi.json']);
/** Path prefixes that need no session (SSO sign-in flow, static assets). */
const PUBLIC_PREFIXES = ['/static/', '/login/sso/'];
/**
 * Posts that servers make, not browsers: an identity provider's back-channel logout. Public by the prefix above, and
 * no browser form: no same-site or form-token check applies (no session acts in them); the signed token they carry is
 * their only credential, checked by the route.
 */
const SERVER_POSTS = /^\/login\/sso\/[^/]+\/backchannel-logout$/;
/** Paths a half-signed-in session (owing a second factor or offered enrolment) may reach; sign-out is among them. */
const PENDING_EXACT = new Set([
  '/login/totp',
  '/login/totp/passkey',
  '/login/totp/passkey/options',
  '/login/enrol',
  '/logout',
]);
/** Every route under these prefixes requires the admin role, reads included: the whole /settings screen. */
const ADMIN_PREFIXES = ['/settings'];
/**
 * State-changing routes a viewer may use on their own behalf: Profile and its sections (password, second factor, API
 * tokens, SSO link/unlink, sessions) and read marks. Sign-in steps and sign-out are public or pending above.
 */
const SELF_SERVICE_PREFIXES = ['/profile'];
const SELF_SERVICE_EXACT = new Set([
  '/messages/read',
  '/messages/read-all',
  '/messages/unread',
  '/api/messages/read',
  '/api/messages/read-all',
  '/api/messages/unread',
]);
/** The API's self-service writes: read marks (above) and revoking one's own tokens. */
const API_SELF_SERVICE_PREFIXES = ['/api/tokens'];
/**
 * API resources that are the console's Settings: admin-only, reads included. The reads are closed by this gate alone;
 * every admin act is also refused by its own domain function when its actor is not an administrator.
 */
const API_ADMIN_PREFIXES = [
  '/api/channels',
  '/api/deliveries',
  '/api/accounts',
  '/api/invitations',
  '/api/sso',
  '/api/settings',
];
/** Methods that only read; every other method changes state and is admin-only outside the self-service list. */
const READ_METHODS = new Set(['GET', 'HEAD']);
/** The JSON API: bearer tokens only, never cookies. */
const API_PREFIX = '/api/';

function under(path: string, prefix: string): boolean {
  return prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`);
}

/** What a request needs: no one, a pending or full session, a full admin session, a bearer token, an admin's token. */
export type Access = 'public' | 'pending' | 'user' | 'admin' | 'api' | 'api-admin';

/**
 * Where app.ts mounts the lazily built JSON API, for every method: the route template of a request refused before it.
 */
export const API_MOUNT = '/api/*';

/** True for /api/ paths, which authenticate by bearer token only (the session cookie and form token never count). */
export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith(API_PREFIX);
}

/** True for a server-to-server post (an identity provider's back-channel logout), which formAndCsrf leaves alone. */
export function isServerPost(method: string, path: string): boolean {
  return method.toUpperCase() === 'POST' && SERVER_POSTS.test(path);
}

/** Classifies a request (method and path) into the access it requires; unlisted writes are admin-only. */
export function accessFor(method: string, path: string): Access {
  const adminByDefault =
    !READ_METHODS.has(method.toUpperCase()) &&
    !SELF_SERVICE_EXACT.has(path) &&
    !SELF_SERVICE_PREFIXES.some((p) => under(path, p));
  if (PUBLIC_EXACT.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p))) return 'public';
  if (isApiPath(path)) {
    if (PUBLIC_API_READS.has(path) && READ_METHODS.has(method.toUpperCase())) return 'public';
    if (API_ADMIN_PREFIXES.some((p) => under(path, p))) return 'api-admin';
    return adminByDefault && !API_SELF_SERVICE_PREFIXES.some((p) => under(path, p)) ? 'api-admin' : 'api';
  }
  if (PENDING_EXACT.has(path)) return 'pending';
  if (adminByDefault || ADMIN_PREFIXES.some((p) => under(path, p))) return 'admin';
  return 'user';
}

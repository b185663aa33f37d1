// Recognises constraint violations on both dialects, so domain code can turn them into typed refusals.

function code(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/** A unique or primary-key constraint refused the write. */
export function isUniqueViolation(err: unknown): boolean {
  const c = code(err);
  return c === '23505' || c === 'SQLITE_CONSTRAINT_UNIQUE' || c === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A foreign-key constraint refused the write (for example removing an author of rows). */
export function isForeignKeyViolation(err: unknown): boolean {
  const c = code(err);
  return c === '23503' || c === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** The message of pg's error when a query outlives the configured query timeout (query_timeout). */
const QUERY_READ_TIMEOUT = 'Query read timeout';

/** A query was given up after the query timeout (SVC_DATABASE_QUERY_TIMEOUT): its connection is not to be reused. */
export function isQueryTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === QUERY_READ_TIMEOUT;
}

// Network failures reaching the server (Node's codes), including a host name that stopped resolving (a database
// container that is down).
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// PostgreSQL's answers while it stops, starts or refuses connections: class 08 (connection exception), 57P01 admin
// shutdown ("terminating connection due to administrator command"), 57P02 crash shutdown, 57P03 cannot connect now
// (starting up or shutting down), 53300 too many connections, 57014 a statement cancelled by a server-side timeout.
const POSTGRES_UNAVAILABLE = /^(08...|57P0[123]|53300|57014)$/;

// What pg says when a connection was not made within the connect timeout (or no pool client freed up within it).
const CONNECT_TIMEOUT_MESSAGES = [
  /^Connection terminated due to connection timeout$/,
  /^timeout expired$/,
  /^timeout exceeded when trying to connect$/,
];

/** Opening a connection took longer than the connect timeout (SVC_DATABASE_CONNECT_TIMEOUT). */
export function isConnectTimeout(err: unknown): boolean {
  return err instanceof Error && CONNECT_TIMEOUT_MESSAGES.some((m) => m.test(err.message));
}

// What pg itself says when the connection is lost or never completes.
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/, // "Connection terminated unexpectedly", "... due to connection timeout"
  /is not queryable$/, // "Client has encountered a connection error and is not queryable"
  /^Connection ended$/,
];

/**
 * The database cannot be reached or stopped answering: the server is down, restarting, refusing connections or gone
 * quiet past a timeout. Callers answer "try again later" (503) instead of "something went wrong". SQLite's "database is
 * locked" is not this: it means another writer held the lock past busy_timeout.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const c = code(err);
  if (c !== undefined && (NETWORK_CODES.has(c) || POSTGRES_UNAVAILABLE.test(c))) return true;
  if (
    err instanceof Error &&
    (isQueryTimeout(err) || isConnectTimeout(err) || PG_CONNECTION_MESSAGES.some((m) => m.test(err.message)))
  )
    return true;
  if (err instanceof AggregateError && err.errors.some((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return 'cause' in err && isDatabaseUnavailable((err as { cause: unknown }).cause, depth + 1);
}

// The one place that reads process.env: parsed once at start-up, every error reported together.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import './zod-messages.ts';
import { parseTrustedProxies, type TrustedProxies } from './net/client-address.ts';

const booleanFlag = z
  .enum(['', '0', '1', 'false', 'true', 'no', 'yes', 'off', 'on'])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** The default SQLite file, used only while DATABASE_URL is unset (a blank value is refused, not defaulted). */
const DEFAULT_SQLITE = './data/svc.sqlite';

/** A value that looks like a URL (`scheme://`, `file:` or `sqlite:`) rather than a file path. */
const URL_LIKE = /^([a-z][a-z0-9+.-]*):\/\/|^(file|sqlite):/i;

/**
 * Whether a postgres:// URL parses with its credentials where they belong. A password with an unencoded `#`, `?` or `/`
 * still parses (`postgres://svc:2024#Secret@db/svc` is host "svc", port 2024 and a fragment), with the password then
 * outside the parts every printer masks; so a fragment, or an `@` while no user name or password was parsed, is
 * refused.
 */
function isWellFormedPostgresUrl(v: string): boolean {
  if (!URL.canParse(v)) return false;
  const url = new URL(v);
  if (v.includes('#')) return false;
  return !(v.includes('@') && url.username === '' && url.password === '');
}

// DATABASE_URL: a postgres:// URL, else a SQLite file path. Anything else is refused here, so a typo never becomes a new,
// empty database (a blank value was once a throwaway in-memory one; `mysql://foo` a directory "mysql:"). The messages
// never repeat the value: it may carry a password.
const databaseUrl = z
  .string()
  .default(DEFAULT_SQLITE)
  .transform((raw, ctx): Config['database'] => {
    const v = raw.trim();
    if (v === '') {
      ctx.addIssue({
        code: 'custom',
        message: `DATABASE_URL is set but empty; unset it for the default ${DEFAULT_SQLITE}, or give a SQLite file path or a postgres:// URL`,
      });
      return z.NEVER;
    }
    if (POSTGRES_URL.test(v)) {
      if (isWellFormedPostgresUrl(v)) return { kind: 'postgres', url: v };
      ctx.addIssue({
        code: 'custom',
        message:
          'DATABASE_URL is not a valid postgres:// URL (percent-encode special characters in the user name and password)',
      });
      return z.NEVER;
    }
    const urlLike = URL_LIKE.exec(v);
    if (urlLike) {
      const scheme = (urlLike[1] ?? urlLike[2]!).toLowerCase();
      ctx.addIssue({
        code: 'custom',
        message: `DATABASE_URL must be a SQLite file path or a postgres:// (postgresql://) URL, or unset for the default ${DEFAULT_SQLITE}; ${scheme}: URLs are not supported`,
      });
      return z.NEVER;
    }
    return { kind: 'sqlite', path: v };
  });

const optionalUrl = (what: string) =>
  z.string().transform((raw, ctx) => {
    const v = raw.trim();
    if (v === '') return undefined;
    const url = URL.canParse(v) ? new URL(v) : undefined;
    if (!url || !['http:', 'https:'].includes(url.protocol)) {
      ctx.addIssue({
        code: 'custom',
        message: `${what} must be an absolute http(s) URL such as https://svc.example.com`,
      });
      return z.NEVER;
    }
    if (url.username || url.password || url.search || url.hash) {
      ctx.addIssue({ code: 'custom', message: `${what} may not contain a user name, password, query or fragment` });
      return z.NEVER;
    }
    return url.href.replace(/\/$/, '');
  });

/** A duration in seconds (decimals allowed) as milliseconds; unset or blank is undefined (the default applies). */
const seconds = (name: string, range: { min: number; max: number }) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const v = raw?.trim() ?? '';
      if (v === '') return undefined;
      const n = Number(v);
      if (!/^\d+(\.\d+)?$/.test(v) || n < range.min || n > range.max) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a number of seconds from ${range.min} to ${range.max}`,
        });
        return z.NEVER;
      }
      return Math.round(n * 1000);
    });

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: databaseUrl,
  SVC_SETUP_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || v.length >= 16, 'SVC_SETUP_TOKEN must be at least 16 characters'),
  SVC_SECURE_COOKIES: booleanFlag.default(false),
  SVC_EXTERNAL_URL: optionalUrl('SVC_EXTERNAL_URL').optional(),
  SVC_PUBLIC_URL: optionalUrl('SVC_PUBLIC_URL').optional(),
  SVC_OIDC_CA_FILE: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()))
    .refine((v) => v === undefined || readablePem(v), 'SVC_OIDC_CA_FILE must name a readable file of PEM certificates'),
  SVC_TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((raw, ctx) => {
      const parsed = parseTrustedProxies(raw);
      if (!parsed) {
        ctx.addIssue({
          code: 'custom',
          message: 'SVC_TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges',
        });
        return z.NEVER;
      }
      return parsed;
    }),
  SVC_DATABASE_LISTEN_URL: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const v = raw?.trim() ?? '';
      if (v === '') return undefined;
      // The message never repeats the value: it may carry a password.
      if (!POSTGRES_URL.test(v) || !isWellFormedPostgresUrl(v)) {
        ctx.addIssue({
          code: 'custom',
          message:
            'SVC_DATABASE_LISTEN_URL must be a valid postgres:// URL (percent-encode special characters in the user name and password)',
        });
        return z.NEVER;
      }
      return v;
    }),
  // Seconds, as an operator thinks of them; PostgreSQL only (SQLite waits on its own lock timeout instead).
  SVC_DATABASE_CONNECT_TIMEOUT: seconds('SVC_DATABASE_CONNECT_TIMEOUT', { min: 0.1, max: 600 }),
  SVC_DATABASE_QUERY_TIMEOUT: seconds('SVC_DATABASE_QUERY_TIMEOUT', { min: 0, max: 86_400 }),
  SVC_METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()))
    .refine((v) => v === undefined || v.length >= 16, 'SVC_METRICS_TOKEN must be at least 16 characters'),
  SVC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset (or blank): plain lines on a terminal, JSON lines otherwise.
  SVC_LOG_FORMAT: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['json', 'plain']).optional()),
});

/** How long opening a PostgreSQL connection may take unless SVC_DATABASE_CONNECT_TIMEOUT says (ms). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long one PostgreSQL query may wait for its answer unless SVC_DATABASE_QUERY_TIMEOUT says (ms; 0 is no limit). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/**
 * A PostgreSQL database: `url`, `listenUrl` (where the worker's LISTEN session connects when `url` goes through a
 * transaction-mode pooler), and the bounds on opening a connection and on one query (ms; the defaults above when
 * absent; a query timeout of 0 is no limit).
 */
export interface PostgresDatabase {
  kind: 'postgres';
  url: string;
  listenUrl?: string;
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
}

/** Everything the service reads from its environment, validated. */
export interface Config {
  /** TCP port the web service listens on (0 picks a free one). */
  port: number;
  /** Interface to bind; 0.0.0.0 by default so a container's port mapping works. */
  host: string;
  /**
   * Which database: a postgres:// URL, or a SQLite file path (default ./data/svc.sqlite). On PostgreSQL, `listenUrl`
   * is where the worker's LISTEN session connects when `url` goes through a transaction-mode pooler; `url` when unset.
   */
  database: { kind: 'sqlite'; path: string } | PostgresDatabase;
  /** Pins the first-run setup token instead of generating one per start. */
  setupToken: string | undefined;
  /** Marks cookies Secure with the __Host- prefix and treats the request scheme as https. */
  secureCookies: boolean;
  /** Origin used to build OIDC redirect URIs and to check form Origin headers; request host when unset. */
  externalUrl: string | undefined;
  /** Base of the absolute links inside messages; links are omitted when unset. */
  publicUrl: string | undefined;
  /** Extra PEM CA certificates trusted (besides the public roots) when talking to SSO providers; for a private CA. */
  oidcCaFile: string | undefined;
  /** pino log level. */
  logLevel: string;
  /** Log lines as JSON or plain text; undefined picks by where they go: plain on a terminal, JSON anywhere else. */
  logFormat: 'json' | 'plain' | undefined;
  /** Bearer token a Prometheus scrape of /metrics must present; unset (the default) turns /metrics off (404). */
  metricsToken?: string;
  /** Reverse proxies whose X-Forwarded-For is believed for the client address (throttling only); none by default. */
  trustedProxies: TrustedProxies;
  /**
   * How long a sign-in refused by the throttle waits before its answer (ms; 1 s, not an environment variable): a client
   * flooding a locked name or address then gets one answer per connection per second instead of filling the event
   * loop that serves everyone's pages. Tests set 0.
   */
  refusedSignInDelayMs: number;
  /**
   * How many passkey sign-ins may be pending at once, all addresses together (their challenges held, not yet answered
   * or expired); past it, asking for sign-in options is refused for a minute. 10,000 unless set (not an environment
   * variable: tests set it low).
   */
  pendingPasskeySignInsMax?: number;
}

function readablePem(file: string): boolean {
  try {
    return fs.readFileSync(file, 'utf8').includes('-----BEGIN CERTIFICATE-----');
  } catch {
    return false;
  }
}

/**
 * The absolute path of the SQLite file `database` names when that file does not exist, else undefined (PostgreSQL,
 * ':memory:', a file that exists). Commands that work on an existing installation refuse then instead of creating an
 * empty database at a mistyped path; only `svc serve` and `svc migrate` create it.
 */
export function absentSqliteFile(database: Config['database']): string | undefined {
  if (database.kind !== 'sqlite' || database.path === ':memory:') return undefined;
  const file = path.resolve(database.path);
  return fs.existsSync(file) ? undefined : file;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/** Parses the environment; returns every problem at once rather than failing on the first. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ConfigResult {
  const parsed = envSchema.safeParse(env);
  // Only a PostgreSQL process listens; on SQLite the setting would silently do nothing.
  const crossErrors =
    (env.SVC_DATABASE_LISTEN_URL ?? '').trim() !== '' && !POSTGRES_URL.test((env.DATABASE_URL ?? '').trim())
      ? ['SVC_DATABASE_LISTEN_URL: only used with a PostgreSQL DATABASE_URL; unset it for SQLite']
      : [];
  if (!parsed.success || crossErrors.length > 0) {
    const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    return { ok: false, errors: [...issues, ...crossErrors] };
  }
  const e = parsed.data;
  const database: Config['database'] =
    e.DATABASE_URL.kind === 'postgres'
      ? {
          ...e.DATABASE_URL,
          ...(e.SVC_DATABASE_LISTEN_URL !== undefined ? { listenUrl: e.SVC_DATABASE_LISTEN_URL } : {}),
          ...(e.SVC_DATABASE_CONNECT_TIMEOUT !== undefined ? { connectTimeoutMs: e.SVC_DATABASE_CONNECT_TIMEOUT } : {}),
          ...(e.SVC_DATABASE_QUERY_TIMEOUT !== undefined ? { queryTimeoutMs: e.SVC_DATABASE_QUERY_TIMEOUT } : {}),
        }
      : e.DATABASE_URL;
  return {
    ok: true,
    config: {
      port: e.PORT,
      host: e.HOST,
      database,
      setupToken: e.SVC_SETUP_TOKEN,
      secureCookies: e.SVC_SECURE_COOKIES,
      externalUrl: e.SVC_EXTERNAL_URL,
      publicUrl: e.SVC_PUBLIC_URL,
      oidcCaFile: e.SVC_OIDC_CA_FILE,
      logLevel: e.SVC_LOG_LEVEL,
      logFormat: e.SVC_LOG_FORMAT,
      metricsToken: e.SVC_METRICS_TOKEN,
      trustedProxies: e.SVC_TRUSTED_PROXIES,
      refusedSignInDelayMs: 1000,
    },
  };
}

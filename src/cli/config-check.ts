// svc config check: validates the environment with start-up's own loader and prints the effective settings, every
// secret (tokens, the database password) shown only as set or not set.
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_QUERY_TIMEOUT_MS,
  absentSqliteFile,
  loadConfig,
  type Config,
} from '../config.ts';
import { looseModes } from '../db/file-modes.ts';
import { reportInvalidConfiguration } from './start.ts';

export const CONFIG_HELP = `Usage: svc config check

Validates the environment exactly as start-up does (every problem reported together) and prints the effective
settings. Secrets are never printed: SVC_SETUP_TOKEN, SVC_METRICS_TOKEN and any password inside DATABASE_URL or
SVC_DATABASE_LISTEN_URL show as "set" or "not set". It does not connect to the database (GET /readyz of a running
instance tells whether it is reachable and migrated). It warns when an existing SQLite database file or its folder is
readable or writable by other users (they should be 0600 and 0700).

Exit codes: 0 valid, 2 invalid (or a usage error).
`;

/** Runs `svc config check`; `env` and `out` are injectable for tests. */
export function runConfigCheck(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: (text: string) => void = (t) => process.stdout.write(t),
): number {
  const { positionals, values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    out(CONFIG_HELP);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'check') {
    process.stderr.write(`svc config: expected "svc config check"\n\n${CONFIG_HELP}`);
    return 2;
  }
  const loaded = loadConfig(env);
  if (!loaded.ok) return reportInvalidConfiguration(loaded.errors);
  out(`The configuration is valid. Effective settings:\n\n${effectiveSettings(loaded.config)}`);
  const db = loaded.config.database;
  const loose = db.kind === 'sqlite' && db.path !== ':memory:' ? looseModes(db.path) : [];
  if (loose.length > 0) {
    out(
      `\nWarning: the database holds second-factor secrets, keys and client secrets, yet other local users can reach it:\n${loose.map((p) => `  ${p}\n`).join('')}`,
    );
  }
  return 0;
}

/** The settings as a two-column table, secrets as "set"/"not set". */
export function effectiveSettings(config: Config): string {
  const db = config.database;
  const rows: [string, string][] = [
    ['PORT', String(config.port)],
    ['HOST', config.host],
    ['DATABASE_URL', db.kind === 'sqlite' ? sqliteSetting(db) : `${withoutPassword(db.url)} (PostgreSQL)`],
    [
      'SVC_DATABASE_LISTEN_URL',
      db.kind === 'postgres' && db.listenUrl ? withoutPassword(db.listenUrl) : 'not set (DATABASE_URL)',
    ],
    ...(db.kind === 'postgres'
      ? ([
          ['SVC_DATABASE_CONNECT_TIMEOUT', `${(db.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) / 1000} s`],
          [
            'SVC_DATABASE_QUERY_TIMEOUT',
            (db.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS) === 0
              ? 'none'
              : `${(db.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS) / 1000} s`,
          ],
        ] as [string, string][])
      : []),
    [
      'SVC_SETUP_TOKEN',
      config.setupToken ? 'set' : 'not set (a fresh one is printed at each start while no account exists)',
    ],
    ['SVC_SECURE_COOKIES', String(config.secureCookies)],
    ['SVC_EXTERNAL_URL', config.externalUrl ?? 'not set (the request host)'],
    ['SVC_PUBLIC_URL', config.publicUrl ?? 'not set (messages carry no links)'],
    [
      'SVC_TRUSTED_PROXIES',
      config.trustedProxies.length > 0
        ? config.trustedProxies.map(([range, bits]) => `${range.toString()}/${bits}`).join(', ')
        : 'none',
    ],
    ['SVC_OIDC_CA_FILE', config.oidcCaFile ?? 'not set'],
    ['SVC_METRICS_TOKEN', config.metricsToken ? 'set (/metrics is on)' : 'not set (/metrics is off)'],
    ['SVC_LOG_LEVEL', config.logLevel],
    ['SVC_LOG_FORMAT', config.logFormat ?? 'not set (plain lines on a terminal, JSON lines otherwise)'],
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return rows.map(([name, value]) => `${name.padEnd(width)}${value}\n`).join('');
}

/**
 * The SQLite path as given, where it resolves, and whether the file is still to be created (a mistyped path shows
 * here).
 */
function sqliteSetting(db: Extract<Config['database'], { kind: 'sqlite' }>): string {
  if (db.path === ':memory:') return ':memory: (SQLite, in memory: nothing is kept)';
  const absent = absentSqliteFile(db);
  return absent === undefined
    ? `${db.path} (SQLite at ${path.resolve(db.path)})`
    : `${db.path} (SQLite at ${absent}; does not exist yet: svc serve or svc migrate creates it)`;
}

/** A postgres:// URL without its password (in the authority or a `password`/`sslpassword` parameter), saying whether one was set. */
function withoutPassword(raw: string): string {
  const url = new URL(raw);
  const secretParams = [...url.searchParams.keys()].filter((name) => /password/i.test(name));
  const hasPassword = url.password !== '' || secretParams.length > 0;
  url.password = '';
  for (const name of secretParams) url.searchParams.delete(name);
  // Parts by name, never `href`: nothing outside them (config refuses a fragment) is printed.
  const user = url.username === '' ? '' : `${url.username}@`;
  return `${url.protocol}//${user}${url.host}${url.pathname}${url.search} (password ${hasPassword ? 'set' : 'not set'})`;
}

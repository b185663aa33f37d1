import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { absentSqliteFile, loadConfig, type Config } from './config.ts';

test('defaults: port 8080, SQLite under ./data, insecure cookies, no public URL', () => {
  const r = loadConfig({});
  assert.ok(r.ok);
  assert.equal(r.config.port, 8080);
  assert.deepEqual(r.config.database, { kind: 'sqlite', path: './data/svc.sqlite' });
  assert.equal(r.config.secureCookies, false);
  assert.equal(r.config.publicUrl, undefined);
});

test('a postgres URL selects PostgreSQL; flags and URLs are parsed', () => {
  const r = loadConfig({
    DATABASE_URL: 'postgres://svc@db:5432/svc',
    SVC_SECURE_COOKIES: 'true',
    SVC_EXTERNAL_URL: 'https://svc.example.com/',
    SVC_PUBLIC_URL: '',
    PORT: '9000',
  });
  assert.ok(r.ok);
  assert.deepEqual(r.config.database, { kind: 'postgres', url: 'postgres://svc@db:5432/svc' });
  assert.equal(r.config.secureCookies, true);
  assert.equal(r.config.externalUrl, 'https://svc.example.com');
  assert.equal(r.config.publicUrl, undefined);
  assert.equal(r.config.port, 9000);
});

test('every error is reported together', () => {
  const r = loadConfig({
    PORT: 'eighty',
    SVC_SECURE_COOKIES: 'maybe',
    SVC_EXTERNAL_URL: 'not a url',
    SVC_SETUP_TOKEN: 'short',
    SVC_PUBLIC_URL: 'https://user:pw@svc.example.com/?x=1',
    SVC_TRUSTED_PROXIES: 'proxy.internal',
  });
  assert.equal(r.ok, false);
  if (r.ok) return;
  const text = r.errors.join('\n');
  assert.match(text, /^PORT: Must be a number\.$/m, 'in plain words, not zod\'s "expected number, received NaN"');
  for (const name of [
    'PORT',
    'SVC_SECURE_COOKIES',
    'SVC_EXTERNAL_URL',
    'SVC_SETUP_TOKEN',
    'SVC_PUBLIC_URL',
    'SVC_TRUSTED_PROXIES',
  ]) {
    assert.match(text, new RegExp(name));
  }
});

test('SVC_DATABASE_CONNECT_TIMEOUT and SVC_DATABASE_QUERY_TIMEOUT: seconds, into the PostgreSQL settings in ms; bad values refused', () => {
  const url = 'postgres://svc@db/svc';
  const set = loadConfig({ DATABASE_URL: url, SVC_DATABASE_CONNECT_TIMEOUT: ' 2.5 ', SVC_DATABASE_QUERY_TIMEOUT: '0' });
  assert.ok(set.ok);
  assert.deepEqual(set.config.database, { kind: 'postgres', url, connectTimeoutMs: 2500, queryTimeoutMs: 0 });
  const unset = loadConfig({ DATABASE_URL: url, SVC_DATABASE_CONNECT_TIMEOUT: '', SVC_DATABASE_QUERY_TIMEOUT: '' });
  assert.ok(unset.ok);
  assert.deepEqual(unset.config.database, { kind: 'postgres', url }, 'blank: the defaults apply');
  for (const [name, value] of [
    ['SVC_DATABASE_CONNECT_TIMEOUT', '0'],
    ['SVC_DATABASE_CONNECT_TIMEOUT', '5s'],
    ['SVC_DATABASE_CONNECT_TIMEOUT', '601'],
    ['SVC_DATABASE_QUERY_TIMEOUT', '-1'],
    ['SVC_DATABASE_QUERY_TIMEOUT', 'soon'],
  ] as const) {
    const r = loadConfig({ DATABASE_URL: url, [name]: value });
    assert.equal(r.ok, false, `${name}=${value}`);
    if (!r.ok) assert.match(r.errors.join('\n'), new RegExp(`${name}: ${name} must be a number of seconds`));
  }
});

test('SVC_DATABASE_LISTEN_URL: a direct postgres:// URL for the LISTEN session, only beside a PostgreSQL DATABASE_URL', () => {
  const pooled = 'postgres://svc:pw@pgbouncer:6432/svc';
  const direct = 'postgresql://svc:pw@db:5432/svc';
  const withListen = loadConfig({ DATABASE_URL: pooled, SVC_DATABASE_LISTEN_URL: ` ${direct} ` });
  assert.ok(withListen.ok);
  assert.deepEqual(withListen.config.database, { kind: 'postgres', url: pooled, listenUrl: direct });
  const unset = loadConfig({ DATABASE_URL: pooled, SVC_DATABASE_LISTEN_URL: '' });
  assert.ok(unset.ok);
  assert.deepEqual(
    unset.config.database,
    { kind: 'postgres', url: pooled },
    'unset: the session listens on DATABASE_URL',
  );

  const cases: [NodeJS.ProcessEnv, RegExp][] = [
    [
      { DATABASE_URL: pooled, SVC_DATABASE_LISTEN_URL: 'https://user:hunter2@db/svc' },
      /SVC_DATABASE_LISTEN_URL must be a valid postgres:\/\/ URL/,
    ],
    [
      { DATABASE_URL: pooled, SVC_DATABASE_LISTEN_URL: 'postgres://user:hunter2@[db/svc' },
      /SVC_DATABASE_LISTEN_URL must be a valid postgres:\/\/ URL/,
    ],
    [
      { DATABASE_URL: pooled, SVC_DATABASE_LISTEN_URL: 'postgres://user:2024#hunter2@db/svc' },
      /SVC_DATABASE_LISTEN_URL must be a valid postgres:\/\/ URL/,
    ],
    [
      { SVC_DATABASE_LISTEN_URL: 'postgres://user:hunter2@db/svc' },
      /SVC_DATABASE_LISTEN_URL: only used with a PostgreSQL DATABASE_URL/,
    ],
    [
      { PORT: 'eighty', SVC_DATABASE_LISTEN_URL: 'postgres://user:hunter2@db/svc' },
      /PORT[\s\S]*SVC_DATABASE_LISTEN_URL: only used/,
    ],
  ];
  for (const [env, message] of cases) {
    const r = loadConfig(env);
    assert.equal(r.ok, false, JSON.stringify(env));
    if (r.ok) continue;
    assert.match(r.errors.join('\n'), message);
    assert.doesNotMatch(r.errors.join('\n'), /hunter2/, 'the password is never repeated');
  }
});

test('a postgres:// URL whose password holds an unencoded #, ? or / is refused: it would parse with the password outside the user part', () => {
  // Each parses as a URL (host "svc", a port of digits or none, and the rest as fragment, query or path), so the
  // password would sit where no printer masks it.
  for (const url of [
    'postgres://svc:2024#hunter2@db.internal/svc',
    'postgres://svc:#hunter2@db.internal/svc',
    'postgres://svc:12?hunter2@db.internal/svc',
    'postgres://svc:/hunter2@db.internal/svc',
  ]) {
    const r = loadConfig({ DATABASE_URL: url });
    assert.equal(r.ok, false, url);
    if (r.ok) continue;
    assert.match(
      r.errors.join('\n'),
      /DATABASE_URL is not a valid postgres:\/\/ URL \(percent-encode special characters/,
    );
    assert.doesNotMatch(r.errors.join('\n'), /hunter2/);
  }
  for (const url of [
    'postgres://svc:2024%23hunter2@db.internal/svc',
    'postgres://svc@db.internal/svc?sslmode=require',
    'postgres:///svc?host=/var/run/postgresql',
  ]) {
    assert.ok(loadConfig({ DATABASE_URL: url }).ok, url);
  }
});

test('SVC_METRICS_TOKEN: unset turns /metrics off; when set, at least 16 characters, never repeated in the error', () => {
  const off = loadConfig({ SVC_METRICS_TOKEN: '' });
  assert.ok(off.ok);
  assert.equal(off.config.metricsToken, undefined);
  const on = loadConfig({ SVC_METRICS_TOKEN: ' metrics-token-0123456789 ' });
  assert.ok(on.ok);
  assert.equal(on.config.metricsToken, 'metrics-token-0123456789');
  const short = loadConfig({ SVC_METRICS_TOKEN: 'short-secret' });
  assert.equal(short.ok, false);
  if (short.ok) return;
  assert.deepEqual(short.errors, ['SVC_METRICS_TOKEN: SVC_METRICS_TOKEN must be at least 16 characters']);
});

test('DATABASE_URL: a SQLite path or a postgres:// URL; blank and other URLs are refused, never repeating the value', () => {
  const accepted: [string, Config['database']][] = [
    ['./data/other.sqlite', { kind: 'sqlite', path: './data/other.sqlite' }],
    [' /var/lib/svc/svc.sqlite ', { kind: 'sqlite', path: '/var/lib/svc/svc.sqlite' }],
    [':memory:', { kind: 'sqlite', path: ':memory:' }],
    ['postgresql://svc@db/svc', { kind: 'postgres', url: 'postgresql://svc@db/svc' }],
  ];
  for (const [value, database] of accepted) {
    const r = loadConfig({ DATABASE_URL: value });
    assert.ok(r.ok, value);
    assert.deepEqual(r.config.database, database, value);
  }
  const refused: [string, RegExp][] = [
    [
      '',
      /^DATABASE_URL: DATABASE_URL is set but empty; unset it for the default \.\/data\/svc\.sqlite, or give a SQLite file path or a postgres:\/\/ URL$/,
    ],
    ['   ', /DATABASE_URL is set but empty/],
    [
      'mysql://root:hunter2@db/svc',
      /^DATABASE_URL: DATABASE_URL must be a SQLite file path or a postgres:\/\/ \(postgresql:\/\/\) URL, or unset for the default \.\/data\/svc\.sqlite; mysql: URLs are not supported$/,
    ],
    ['file:./hunter2.sqlite', /file: URLs are not supported/],
    ['sqlite:///hunter2.sqlite', /sqlite: URLs are not supported/],
    ['https://hunter2@db.example.com/svc', /https: URLs are not supported/],
    ['postgres://svc:hunter2@[db/svc', /^DATABASE_URL: DATABASE_URL is not a valid postgres:\/\/ URL/],
  ];
  for (const [value, message] of refused) {
    const r = loadConfig({ DATABASE_URL: value, PORT: 'eighty' });
    assert.equal(r.ok, false, value);
    if (r.ok) continue;
    assert.equal(r.errors.length, 2, `reported with the other errors: ${value}`);
    assert.match(r.errors.find((e) => e.startsWith('DATABASE_URL'))!, message, value);
    assert.doesNotMatch(r.errors.join('\n'), /hunter2/, 'the value is never repeated');
  }
});

test('absentSqliteFile: the absolute path of a SQLite file not yet created; nothing for PostgreSQL, :memory: or a file that exists', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
  try {
    const existing = path.join(dir, 'svc.sqlite');
    fs.writeFileSync(existing, '');
    assert.equal(absentSqliteFile({ kind: 'sqlite', path: existing }), undefined);
    assert.equal(
      absentSqliteFile({ kind: 'sqlite', path: path.join(dir, 'nope', 'svc.sqlite') }),
      path.join(dir, 'nope', 'svc.sqlite'),
    );
    assert.equal(
      absentSqliteFile({ kind: 'sqlite', path: 'relative-nope.sqlite' }),
      path.resolve('relative-nope.sqlite'),
    );
    assert.equal(absentSqliteFile({ kind: 'sqlite', path: ':memory:' }), undefined);
    assert.equal(absentSqliteFile({ kind: 'postgres', url: 'postgres://svc@db/svc' }), undefined);
    assert.ok(!fs.existsSync(path.join(dir, 'nope')), 'nothing created');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// How every command starts, as an operator meets it (bin/svc.js runs the build of the sources): a DATABASE_URL that is
// blank or not a supported form is a configuration error, a mistyped SQLite path is refused rather than created, and an
// unreachable database is one line without a stack or a password.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { build } from '../../scripts/build.mjs';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { describeDatabase, reasonOf } from './runtime.ts';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
let dir: string;

before(async () => {
  await build();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-runtime-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `svc <args>` in `cwd` with DATABASE_URL (and `env`) set; resolves with the exit code and both streams. */
async function svcIn(cwd: string, databaseUrl: string, args: string[], env: Record<string, string> = {}) {
  const options = {
    cwd,
    env: {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      SVC_LOG_LEVEL: 'info',
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
      DATABASE_URL: databaseUrl,
    },
  };
  return exec(process.execPath, [bin, ...args], options).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** A fresh, empty working directory: whatever a command creates shows up in it. */
const emptyDir = () => fs.mkdtempSync(path.join(dir, 'cwd-'));

const EMIT = ['emit', '--cause', 'drift', '--subject-kind', 'service', '--subject-key', 'k', '--headline', 'It moved.'];

test('a blank or unsupported DATABASE_URL is invalid configuration (exit 2) for every command; nothing is created', async () => {
  const every = [
    ['config', 'check'],
    ['serve'],
    ['migrate'],
    ['invite', '--role', 'admin'],
    ['accounts', 'list'],
    EMIT,
    ['backup', 'copy.sqlite'],
    ['worker'],
  ];
  const cases: [string, RegExp, string[][]][] = [
    [
      '',
      /DATABASE_URL is set but empty; unset it for the default \.\/data\/svc\.sqlite, or give a SQLite file path or a postgres:\/\/ URL/,
      every,
    ],
    [
      'mysql://root:hunter2@db/svc',
      /DATABASE_URL must be a SQLite file path or a postgres:\/\/ \(postgresql:\/\/\) URL, or unset for the default \.\/data\/svc\.sqlite; mysql: URLs are not supported/,
      every,
    ],
    ['file:./svc.sqlite', /file: URLs are not supported/, [['config', 'check'], ['serve']]],
  ];
  for (const [url, message, commands] of cases) {
    for (const args of commands) {
      const cwd = emptyDir();
      const run = await svcIn(cwd, url, args);
      const what = `DATABASE_URL=${url} svc ${args.join(' ')}`;
      assert.equal(run.code, 2, what);
      assert.equal(run.stdout, '', what);
      assert.match(run.stderr, /^svc: invalid configuration:\n {2}- DATABASE_URL: /, what);
      assert.match(run.stderr, message, what);
      assert.doesNotMatch(run.stderr, /hunter2/, what);
      assert.deepEqual(fs.readdirSync(cwd), [], `${what} created nothing`);
    }
  }
});

test('commands on an existing installation refuse a SQLite file that does not exist (exit 1), creating nothing', async () => {
  const cwd = emptyDir();
  const missing = path.join(cwd, 'typo', 'svc.sqlite');
  for (const args of [
    ['accounts', 'list'],
    ['accounts', 'reset-password', 'bob'],
    ['invite', '--role', 'admin'],
    EMIT,
    ['worker'],
  ]) {
    const run = await svcIn(cwd, missing, args);
    const what = `svc ${args.join(' ')}`;
    assert.equal(run.code, 1, what);
    assert.equal(run.stdout, '', what);
    assert.equal(
      run.stderr,
      `svc: no svc database at ${missing} (DATABASE_URL); run \`svc migrate\` or \`svc serve\` first, or check DATABASE_URL\n`,
      what,
    );
  }
  const relative = await svcIn(cwd, 'data/svc.sqlite', ['accounts', 'list']);
  assert.match(
    relative.stderr,
    new RegExp(`^svc: no svc database at ${path.join(fs.realpathSync(cwd), 'data', 'svc.sqlite')} `),
    'the path is shown absolute',
  );
  const backup = await svcIn(cwd, missing, ['backup', path.join(cwd, 'copy.sqlite')]);
  assert.equal(backup.code, 1);
  assert.equal(backup.stderr, `svc backup: no svc database at ${missing} (DATABASE_URL); check DATABASE_URL\n`);
  assert.deepEqual(fs.readdirSync(cwd), [], 'no directory, no file');

  // svc migrate (like svc serve: cli.test.ts) creates it; then the other commands work on it.
  const migrated = await svcIn(cwd, missing, ['migrate']);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.ok(fs.existsSync(missing));
  const listed = await svcIn(cwd, missing, ['accounts', 'list']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^No accounts yet\./);
});

test('a file that is not a database: one line, exit 1, no stack', async () => {
  const cwd = emptyDir();
  fs.writeFileSync(
    path.join(cwd, 'notes.txt'),
    'not a database, just some text that is long enough to have a header\n'.repeat(10),
  );
  const run = await svcIn(cwd, 'notes.txt', ['accounts', 'list']);
  assert.equal(run.code, 1);
  assert.equal(
    run.stderr,
    `svc: cannot open the database (SQLite at ${path.join(fs.realpathSync(cwd), 'notes.txt')}): file is not a database\n`,
  );
});

test('an unreachable PostgreSQL is one line naming where, without a stack or the password (exit 1)', async () => {
  // Port 1 on the loopback interface: nothing listens there.
  const url = 'postgres://svc:hunter2-secret@127.0.0.1:1/svc?sslpassword=key-hunter3';
  for (const args of [['accounts', 'list'], ['invite', '--role', 'admin'], ['migrate'], ['serve']]) {
    const run = await svcIn(emptyDir(), url, args);
    const what = `svc ${args.join(' ')}`;
    assert.equal(run.code, 1, what);
    assert.equal(
      run.stderr,
      'svc: cannot reach the database (PostgreSQL at 127.0.0.1:1): connect ECONNREFUSED 127.0.0.1:1\n',
      what,
    );
    assert.doesNotMatch(run.stdout, /hunter|stack|"level":60/, what);
  }
});

test('PostgreSQL refusing the connection (no such database) is one line too', {
  skip: !process.env.TEST_DATABASE_URL,
}, async () => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.password = 'hunter2-secret';
  url.pathname = '/svc_no_such_database';
  const run = await svcIn(emptyDir(), url.href, ['accounts', 'list']);
  assert.equal(run.code, 1);
  assert.match(
    run.stderr,
    /^svc: cannot reach the database \(PostgreSQL at [^)]+\): database "svc_no_such_database" does not exist\n$/,
  );
  assert.doesNotMatch(run.stderr, /hunter2/);
});

test('on PostgreSQL, a database without svc tables is refused by commands that do not create one, and migrated by svc migrate', {
  skip: !process.env.TEST_DATABASE_URL,
}, async (t) => {
  const empty = await createTestDatabase('postgres', { migrate: false });
  t.after(() => empty.drop());
  const url = empty.database.kind === 'postgres' ? empty.database.url : '';
  const name = new URL(url).pathname.slice(1);
  for (const args of [['accounts', 'list'], ['invite', '--role', 'admin'], EMIT, ['worker']]) {
    const run = await svcIn(emptyDir(), url, args);
    assert.equal(run.code, 1, args.join(' '));
    assert.match(
      run.stderr,
      new RegExp(
        `^svc: no svc tables in the database "${name}" \\(PostgreSQL at [^)]+\\); run \`svc migrate\` or \`svc serve\` first, or check DATABASE_URL\n$`,
      ),
      args.join(' '),
    );
  }
  const tables = await sql<{
    n: number;
  }>`select count(*)::int as n from information_schema.tables where table_schema = 'public'`.execute(empty.db);
  assert.equal(tables.rows[0]!.n, 0, 'nothing was created');
  assert.equal((await svcIn(emptyDir(), url, ['migrate'])).code, 0);
  assert.equal((await svcIn(emptyDir(), url, ['accounts', 'list'])).code, 0);
});

test('reasonOf masks the URL password (as written and decoded) and keeps one line; describeDatabase names no user or password', () => {
  const pg = {
    kind: 'postgres',
    url: 'postgres://svc:p%40ss-hunter2@db.internal:6432/svc?sslpassword=key-hunter3',
  } as const;
  assert.equal(
    reasonOf(new Error('auth failed for p@ss-hunter2 and p%40ss-hunter2, key key-hunter3\n    at somewhere'), pg),
    'auth failed for *** and ***, key ***',
  );
  assert.equal(
    reasonOf(
      new AggregateError([new Error('connect ECONNREFUSED ::1:1'), new Error('connect ECONNREFUSED 127.0.0.1:1')], ''),
      pg,
    ),
    'connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1',
  );
  assert.equal(reasonOf(Object.assign(new Error(''), { code: 'ETIMEDOUT' }), pg), 'ETIMEDOUT');
  // A password equal to a part the message names anyway stays: masking "5432" would confirm the password.
  const short = { kind: 'postgres', url: 'postgres://svc:5432@127.0.0.1/svc' } as const;
  assert.equal(
    reasonOf(new Error('connect ECONNREFUSED 127.0.0.1:5432'), short),
    'connect ECONNREFUSED 127.0.0.1:5432',
  );
  assert.equal(describeDatabase(pg), 'PostgreSQL at db.internal:6432');
  assert.equal(describeDatabase({ kind: 'postgres', url: 'postgres://svc:pw@db/svc' }), 'PostgreSQL at db:5432');
  assert.equal(
    describeDatabase({ kind: 'postgres', url: 'postgres:///svc?host=/var/run/postgresql' }),
    'PostgreSQL at /var/run/postgresql',
  );
  assert.equal(describeDatabase({ kind: 'sqlite', path: '/srv/svc.sqlite' }), 'SQLite at /srv/svc.sqlite');
});

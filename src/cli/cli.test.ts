// The svc command as an operator runs it.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { build } from '../../scripts/build.mjs';
import { createTestDatabase } from '../../test/helpers/db.ts';

const run = promisify(execFile);
const bin = new URL('../../bin/svc.js', import.meta.url).pathname;

// bin/svc.js runs dist/, so these tests run the build of the sources as they are now.
before(() => build());

test('svc --help lists the commands', async () => {
  const { stdout } = await run(process.execPath, [bin, '--help']);
  assert.match(stdout, /serve \[--no-worker\]/);
  assert.match(stdout, /migrate/);
});

test('svc --version prints the version of package.json and exits 0', async () => {
  const { version } = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const { stdout, stderr } = await run(process.execPath, [bin, '--version']);
  assert.equal(stdout, `${version}\n`);
  assert.equal(stderr, '');
  assert.match(
    (await run(process.execPath, [bin, '--help'])).stdout,
    /^ {2}--version +print the version of svc$/m,
    'listed in svc --help',
  );
});

test('help and usage mistakes answer without loading a database driver or the web application', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  const preload = new URL('../../test/fixtures/resolve-log.mjs', import.meta.url).href;
  try {
    const cases: [string[], number][] = [
      [['--help'], 0],
      [['--version'], 0],
      [['bogus'], 2],
      [['emit', '--help'], 0],
      [['emit', '--cause', 'nope'], 2],
      [['invite', '--help'], 0],
      [['accounts', '--help'], 0],
    ];
    for (const [i, [args, code]] of cases.entries()) {
      const log = path.join(dir, `resolved-${i}.txt`);
      const result = await run(process.execPath, ['--import', preload, bin, ...args], {
        env: { ...process.env, SVC_RESOLVE_LOG: log },
      }).then(
        () => 0,
        (e) => e.code,
      );
      assert.equal(result, code, args.join(' '));
      const resolved = fs.readFileSync(log, 'utf8').split('\n');
      assert.ok(
        resolved.some((s) => s.endsWith('svc.js')),
        'the hook saw the entry point',
      );
      for (const heavy of ['pg', 'better-sqlite3', 'hono', 'undici'])
        assert.ok(!resolved.includes(heavy), `svc ${args.join(' ')} loaded ${heavy}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a command loads the driver of the configured database only (pg alone is ~35 ms of start-up)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  const preload = new URL('../../test/fixtures/resolve-log.mjs', import.meta.url).href;
  // svc emit works on an existing database only (svc serve or svc migrate creates one).
  const sqliteDb = await createTestDatabase('sqlite');
  const pgDb = process.env.TEST_DATABASE_URL ? await createTestDatabase('postgres') : undefined;
  t.after(async () => {
    await sqliteDb.drop();
    await pgDb?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const emitArgs = [
    'emit',
    '--cause',
    'drift',
    '--subject-kind',
    'host',
    '--subject-key',
    'web-1',
    '--headline',
    'Port 22 opened.',
  ];
  const cases = [
    { url: sqliteDb.database.kind === 'sqlite' ? sqliteDb.database.path : '', loads: 'better-sqlite3', not: 'pg' },
  ];
  if (pgDb && pgDb.database.kind === 'postgres')
    cases.push({ url: pgDb.database.url, loads: 'pg', not: 'better-sqlite3' });
  for (const [i, c] of cases.entries()) {
    const log = path.join(dir, `resolved-${i}.txt`);
    const { stdout } = await run(process.execPath, ['--import', preload, bin, ...emitArgs], {
      env: { ...process.env, DATABASE_URL: c.url, SVC_RESOLVE_LOG: log },
    });
    assert.match(stdout, /^[\w-]{22}\n$/, 'the message id');
    const resolved = fs.readFileSync(log, 'utf8').split('\n');
    assert.ok(resolved.includes(c.loads), `svc emit on ${c.loads} loaded it`);
    assert.ok(!resolved.includes(c.not), `svc emit on ${c.loads} loaded ${c.not}`);
  }
});

test('without a build, svc says how to make one and exits 1', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  try {
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.copyFileSync(bin, path.join(dir, 'bin', 'svc.js'));
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
    const err = await run(process.execPath, [path.join(dir, 'bin', 'svc.js'), '--help']).catch((e) => e);
    assert.equal(err.code, 1);
    assert.match(err.stderr, /run `npm install` \(or `npm run build`\)/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an invalid environment is reported whole, before listening', async () => {
  const err = await run(process.execPath, [bin, 'serve'], {
    env: { ...process.env, PORT: 'x', SVC_SECURE_COOKIES: 'perhaps' },
  }).catch((e) => e);
  assert.equal(err.code, 2);
  assert.match(err.stderr, /PORT/);
  assert.match(err.stderr, /SVC_SECURE_COOKIES/);
});

test('svc serve creates its SQLite database, prints a working setup link, and stops cleanly, never loading pg', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  const preload = new URL('../../test/fixtures/resolve-log.mjs', import.meta.url).href;
  const resolveLog = path.join(dir, 'resolved.txt');
  const child = spawn(process.execPath, ['--import', preload, bin, 'serve'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: path.join(dir, 'data', 'svc.sqlite'),
      SVC_SETUP_TOKEN: '',
      SVC_RESOLVE_LOG: resolveLog,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    const link = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const m = /"setupLink":"([^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    assert.ok(fs.existsSync(path.join(dir, 'data', 'svc.sqlite')));
    const url = new URL(link);
    assert.equal(url.pathname, '/setup');
    assert.equal(
      url.hostname,
      '127.0.0.1',
      'the link names the address listened on (HOST), which localhost may not reach',
    );
    const local = `http://127.0.0.1:${url.port}/setup${url.search}`;
    const page = await fetch(local);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Create administrator/);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const resolved = fs.readFileSync(resolveLog, 'utf8').split('\n');
    assert.ok(resolved.includes('better-sqlite3') && !resolved.includes('pg'), 'the SQLite driver only');
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

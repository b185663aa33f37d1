// Log lines: JSON for collectors, one plain line per event on a terminal, the same redaction in both.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { DestinationStream } from 'pino';
import { buildTestApp } from '../test/helpers/app.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { buildAccount } from '../test/helpers/factories.ts';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { chooseLogFormat, createLogger, formatPlainLine, type LogFormat } from './log.ts';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/svc.js', import.meta.url));

/** A logger of `format` whose lines are collected. */
function capture(format: LogFormat): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination: DestinationStream = { write: (line: string) => void lines.push(line) };
  return { log: createLogger({ level: 'debug', format, destination }), lines };
}

const PLAIN = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (INFO |WARN |ERROR|DEBUG|TRACE|FATAL) (.*)\n$/;

test('a plain line: UTC time, level, message, then key=value; values with spaces, quotes or control characters quoted', () => {
  const { log, lines } = capture('plain');
  log.info(
    {
      port: 8080,
      worker: true,
      database: 'sqlite',
      note: 'two words',
      said: 'a "quote"',
      empty: '',
      url: '/setup?token=[redacted]&x=1',
    },
    'svc listening',
  );
  log.warn({ applied: ['0001-foundation', '0002-outbox'] }, 'database migrated');
  log.error({ err: Object.assign(new Error('boom\nsecond line'), { code: 'E_X' }) }, 'it failed\nfor real');
  assert.equal(lines.length, 3);
  const [first, second, third] = lines.map((l) => PLAIN.exec(l));
  assert.ok(first && second && third, `every line has time and level up front: ${lines.join('')}`);
  assert.ok(Math.abs(Date.parse(first[1]!) - Date.now()) < 60_000, 'the time is now, in UTC');
  assert.equal(first[2], 'INFO ');
  assert.equal(
    first[3],
    'svc listening port=8080 worker=true database=sqlite note="two words" said="a \\"quote\\"" empty="" url=/setup?token=[redacted]&x=1',
  );
  assert.equal(second[2], 'WARN ');
  assert.equal(second[3], 'database migrated applied=0001-foundation,0002-outbox');
  assert.equal(third[2], 'ERROR');
  assert.match(
    third[3]!,
    /^it failed\\nfor real err\.type=Error err\.message="boom\\nsecond line" err\.stack="Error: boom\\nsecond line\\n {4}at .*" err\.code=E_X$/,
  );
  assert.equal(lines.join('').split('\n').length, 4, 'one line per event, whatever the message and values hold');
});

test('a text field the message already shows as a whole word is not repeated: the link ends its line', () => {
  const link = 'http://127.0.0.1:8080/setup?token=abc_DEF-123';
  const line = formatPlainLine(
    JSON.stringify({ level: 30, time: 0, setupLink: link, port: 8080, msg: `setup: open ${link}` }),
  );
  assert.equal(line, `1970-01-01T00:00:00.000Z INFO  setup: open ${link} port=8080\n`);
  const other = formatPlainLine(JSON.stringify({ level: 30, time: 0, dialect: 'sqlite', msg: 'opened sqlite-file' }));
  assert.equal(
    other,
    '1970-01-01T00:00:00.000Z INFO  opened sqlite-file dialect=sqlite\n',
    'a part of a word is no reason to leave a field out',
  );
});

test('the JSON format writes pino JSON lines', () => {
  const { log, lines } = capture('json');
  log.info({ port: 8080 }, 'svc listening');
  const event = JSON.parse(lines[0]!);
  assert.equal(event.msg, 'svc listening');
  assert.equal(event.level, 30);
  assert.equal(event.port, 8080);
  assert.equal(typeof event.time, 'number');
});

test('the format: SVC_LOG_FORMAT when set, else plain on a terminal and JSON elsewhere', () => {
  assert.equal(chooseLogFormat(undefined, true), 'plain');
  assert.equal(chooseLogFormat(undefined, false), 'json');
  assert.equal(chooseLogFormat('json', true), 'json');
  assert.equal(chooseLogFormat('plain', false), 'plain');
});

test('SVC_LOG_FORMAT is json, plain, or unset (blank counts as unset); anything else is a configuration error', () => {
  const format = (value: string | undefined) => {
    const r = loadConfig(value === undefined ? {} : { SVC_LOG_FORMAT: value });
    assert.ok(r.ok, `${value} is accepted`);
    return r.config.logFormat;
  };
  assert.equal(format(undefined), undefined);
  assert.equal(format(''), undefined);
  assert.equal(format('json'), 'json');
  assert.equal(format('plain'), 'plain');
  const r = loadConfig({ SVC_LOG_FORMAT: 'pretty', PORT: 'x' });
  assert.ok(!r.ok);
  assert.ok(
    r.errors.some((e) => e.startsWith('SVC_LOG_FORMAT: ') && e.includes('"json"') && e.includes('"plain"')),
    r.errors.join('\n'),
  );
  assert.ok(
    r.errors.some((e) => e.startsWith('PORT: ')),
    'reported with the other problems',
  );
});

test('redaction is the same in both formats: a token in a URL shows as [redacted], a password or token never', async () => {
  const tdb = await createTestDatabase('sqlite');
  try {
    const t = buildTestApp(tdb);
    const account = await buildAccount(t, { username: 'log-alice' });
    for (const format of ['json', 'plain'] as const) {
      const { log, lines } = capture(format);
      const app = createApp({ ...t.deps, log });
      const setupToken = `very-secret-setup-token-${format}`;
      await app.request(`/setup?token=${setupToken}`);
      await app.request(`/reset?x=1&%74oken=${setupToken}-reset`);
      const password = `wrong-password-${format}`;
      await app.request('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' },
        body: new URLSearchParams({ username: account.username, password }).toString(),
      });
      const text = lines.join('');
      assert.equal(lines.length >= 3, true, `${format}: the requests are logged`);
      assert.ok(!text.includes(setupToken), `${format}: no token in any line`);
      assert.ok(!text.includes(password), `${format}: no password in any line`);
      if (format === 'json') {
        const urls = lines
          .map((l) => JSON.parse(l))
          .filter((l) => l.msg === 'request')
          .map((l) => l.url);
        assert.deepEqual(urls.slice(0, 2), ['/setup?token=[redacted]', '/reset?x=1&%74oken=[redacted]']);
      } else {
        assert.ok(
          lines.some((l) => PLAIN.test(l) && l.includes(' request ') && l.includes(' url=/setup?token=[redacted]')),
          text,
        );
        assert.ok(
          lines.some((l) => l.includes(' url=/reset?x=1&%74oken=[redacted]')),
          text,
        );
      }
    }
  } finally {
    await tdb.drop();
  }
});

/**
 * Runs `svc migrate` on a new SQLite file, in a terminal (a pseudo-terminal made by script(1)) or with stdout a pipe.
 */
async function migrateOutput(where: 'terminal' | 'pipe', format: string | undefined): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-log-'));
  try {
    const env = {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      SVC_LOG_LEVEL: 'info',
      DATABASE_URL: path.join(dir, 'svc.sqlite'),
      SVC_LOG_FORMAT: format ?? '',
    };
    const command = [process.execPath, bin, 'migrate'];
    const { stdout } =
      where === 'pipe'
        ? await exec(command[0]!, command.slice(1), { env })
        : await exec('script', ['-qec', command.map((a) => `'${a}'`).join(' '), '/dev/null'], { env });
    return stdout.replaceAll('\r\n', '\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('svc writes plain lines to a terminal and JSON lines to a pipe; SVC_LOG_FORMAT overrides either way', async () => {
  const plainLine = /^\S+Z INFO {2}database migrated applied=0001-foundation,\S+ dialect=sqlite$/m;
  const jsonLine = /^\{"level":30,"time":\d+,"applied":\["0001-foundation",.*"msg":"database migrated"\}$/m;
  const terminal = await migrateOutput('terminal', undefined);
  assert.match(terminal, plainLine);
  assert.doesNotMatch(terminal, /^\{/m);
  const pipe = await migrateOutput('pipe', undefined);
  assert.match(pipe, jsonLine);
  assert.doesNotMatch(pipe, /INFO/);
  assert.match(await migrateOutput('terminal', 'json'), jsonLine);
  assert.match(await migrateOutput('pipe', 'plain'), plainLine);
});

test('an invalid SVC_LOG_FORMAT stops start-up like any configuration error (exit 2)', async () => {
  const err = await exec(process.execPath, [bin, 'migrate'], {
    env: { ...process.env, SVC_LOG_FORMAT: 'yaml', DATABASE_URL: ':memory:' },
  }).catch((e) => e);
  assert.equal(err.code, 2);
  assert.match(err.stderr, /invalid configuration:\n {2}- SVC_LOG_FORMAT: /);
});

test('svc serve in plain format prints the setup link alone at the end of its line, unquoted, and it works', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-log-'));
  const child = spawn(process.execPath, [bin, 'serve', '--no-worker'], {
    env: {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      SVC_LOG_LEVEL: 'info',
      SVC_LOG_FORMAT: 'plain',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: path.join(dir, 'svc.sqlite'),
      SVC_SETUP_TOKEN: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const found = out.split('\n').find((l, i, all) => i < all.length - 1 && l.includes('setup: open'));
        if (found) resolve(found);
      });
      child.once('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    assert.match(line, PLAIN_START);
    const last = line.split(' ').at(-1)!;
    assert.match(
      last,
      /^http:\/\/127\.0\.0\.1:\d+\/setup\?token=[A-Za-z0-9_-]{20,}$/,
      `the link is the last word, whole and unquoted: ${line}`,
    );
    assert.ok(line.endsWith(` setup: open ${last}`), line);
    const page = await fetch(last);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Create administrator/);
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const PLAIN_START = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}/;

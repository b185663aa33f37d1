// The data folder and every file svc writes there (database, -wal, -shm, backups) are its user's alone, whatever the
// umask: svc runs here under umask 000, which would otherwise make them readable and writable by every local user.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from '../../scripts/build.mjs';
import { svc } from '../../test/helpers/svc.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

before(() => build());

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8).padStart(4, '0');

/** `svc <args>` under umask 000 (through sh, as an operator's shell would start it); resolves with the exit code. */
function svcUnderUmask000(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', 'umask 000; exec "$0" "$@"', process.execPath, bin, ...args],
      { env: { ...process.env, NODE_NO_WARNINGS: '1', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-modes-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("the umask of these tests is permissive (so the modes below are svc's own doing)", async (t) => {
  const dir = tempDir(t);
  await new Promise<void>((resolve, reject) =>
    execFile('sh', ['-c', 'umask 000; mkdir "$0/d"; : > "$0/f"', dir], (err) => (err ? reject(err) : resolve())),
  );
  assert.equal(modeOf(path.join(dir, 'd')), '0777');
  assert.equal(modeOf(path.join(dir, 'f')), '0666');
});

test('svc migrate creates the data folders 0700 and the database file 0600', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'data', 'nested', 'svc.sqlite');
  const run = await svcUnderUmask000(['migrate'], { DATABASE_URL: file });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(modeOf(path.join(dir, 'data')), '0700');
  assert.equal(modeOf(path.join(dir, 'data', 'nested')), '0700');
  assert.equal(modeOf(file), '0600');
  for (const extra of fs.readdirSync(path.dirname(file)))
    assert.equal(modeOf(path.join(path.dirname(file), extra)), '0600', extra);
});

test('svc serve creates the folder 0700 and the database, its -wal and its -shm 0600', async (t) => {
  const dir = tempDir(t);
  const data = path.join(dir, 'data');
  const file = path.join(data, 'svc.sqlite');
  const child = spawn('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, bin, 'serve', '--no-worker'], {
    env: {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: file,
      SVC_SETUP_TOKEN: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  const link = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /"setupLink":"([^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', () => reject(new Error(`exited early: ${out}`)));
  });
  // A page that reads the database, so the -wal and -shm files exist while the server runs.
  const url = new URL(link);
  assert.equal((await fetch(`http://127.0.0.1:${url.port}/setup${url.search}`)).status, 200);
  assert.equal(modeOf(data), '0700');
  const files = fs.readdirSync(data).sort();
  assert.deepEqual(files, ['svc.sqlite', 'svc.sqlite-shm', 'svc.sqlite-wal']);
  for (const f of files) assert.equal(modeOf(path.join(data, f)), '0600', f);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('svc backup writes its copy 0600, also over an existing file with --force', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'data', 'svc.sqlite');
  assert.equal((await svcUnderUmask000(['migrate'], { DATABASE_URL: file })).code, 0);
  const target = path.join(dir, 'backup.sqlite');
  const first = await svcUnderUmask000(['backup', target], { DATABASE_URL: file });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(modeOf(target), '0600');
  fs.chmodSync(target, 0o644);
  const again = await svcUnderUmask000(['backup', '--force', target], { DATABASE_URL: file });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(modeOf(target), '0600');
  assert.deepEqual(fs.readdirSync(dir).sort(), ['backup.sqlite', 'data']);
});

test('svc config check warns when the database folder or file can be read by other users, and says how to fix it', async (t) => {
  const dir = tempDir(t);
  const data = path.join(dir, 'data');
  const file = path.join(data, 'svc.sqlite');
  assert.equal((await svc(['migrate'], { DATABASE_URL: file })).code, 0);
  const quiet = await svc(['config', 'check'], { DATABASE_URL: file });
  assert.equal(quiet.code, 0);
  assert.doesNotMatch(quiet.stdout, /Warning/, 'a private install draws no warning');

  fs.chmodSync(data, 0o755);
  fs.chmodSync(file, 0o644);
  const loose = await svc(['config', 'check'], { DATABASE_URL: file });
  assert.equal(loose.code, 0, 'a warning, not an invalid configuration');
  assert.match(loose.stdout, /Warning: .*other local users can reach it/);
  assert.ok(
    loose.stdout.includes(
      `the database folder ${data} is 0755: readable or writable by other users; chmod 700 ${data}`,
    ),
    loose.stdout,
  );
  assert.ok(
    loose.stdout.includes(`the database file ${file} is 0644: readable or writable by other users; chmod 600 ${file}`),
    loose.stdout,
  );

  fs.chmodSync(data, 0o700);
  fs.chmodSync(file, 0o620);
  const groupWritable = await svc(['config', 'check'], { DATABASE_URL: file });
  assert.ok(
    groupWritable.stdout.includes(`the database file ${file} is 0620`),
    'writable by the group is reported too',
  );
  assert.ok(!groupWritable.stdout.includes('the database folder'), 'the folder is private again');
});

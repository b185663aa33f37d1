// SQLite shared by several processes writing at once: `svc serve` (with its worker), a second `svc worker`, API writes
// and waves of concurrent `svc emit`. Writers wait for the lock (busy_timeout, transactions that take it up front)
// instead of failing: no "database is locked" reaches anyone, and every stored message reaches every channel.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildApiUser } from './helpers/api.ts';
import { buildTestApp, type TestApp } from './helpers/app.ts';
import type { TestDatabase } from './helpers/db.ts';
import { until } from './helpers/delivery.ts';
import { buildChannel } from './helpers/outbox.ts';
import { useReceiver } from './helpers/receiver.ts';
import { migrateWithSvc, spawnSvc, type SvcChild, svc } from './helpers/svc.ts';

const _bin = fileURLToPath(new URL('../bin/svc.js', import.meta.url));
const LOCKED = /database is locked|SQLITE_BUSY/i;

let dir: string;
let tdb: TestDatabase;
let t: TestApp;
const children: SvcChild[] = [];
const receiver = useReceiver();

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sqlite-processes-'));
  tdb = await migrateWithSvc({ kind: 'sqlite', path: path.join(dir, 'svc.sqlite') });
  t = buildTestApp(tdb);
});

after(async () => {
  for (const child of children) child.proc.kill('SIGKILL');
  await tdb?.db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts `svc <args>`, killed after the test. */
function startSvc(args: string[], env: Record<string, string>) {
  const child = spawnSvc(args, env);
  children.push(child);
  return child;
}

test('serve, a second worker, API writes and 4 × 5 concurrent emits: no "database is locked" anywhere, nothing lost', async () => {
  const rx = receiver();
  await buildChannel(tdb.db, { url: `${rx.url}/a` });
  await buildChannel(tdb.db, { url: `${rx.url}/b` });
  const { token } = await buildApiUser(t, 'admin');
  const env = { DATABASE_URL: tdb.database.kind === 'sqlite' ? tdb.database.path : '', PORT: '0', HOST: '127.0.0.1' };
  const web = startSvc(['serve'], env);
  const worker = startSvc(['worker'], env);
  await until(() => /svc listening/.test(web.log()) && /delivery worker started/.test(worker.log()), {
    limitMs: 60_000,
  });
  const base = `http://127.0.0.1:${/"port":(\d+)/.exec(web.log())![1]}`;

  // The web tier writes meanwhile (marking everything read), and reads.
  let busy = true;
  const apiAnswers: { status: number; body: string }[] = [];
  const visitor = (async () => {
    while (busy) {
      for (const [method, url] of [
        ['POST', '/api/messages/read-all'],
        ['GET', '/api/messages'],
      ] as const) {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: method === 'POST' ? '{}' : undefined,
        });
        apiAnswers.push({ status: res.status, body: await res.text() });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();

  const emitted: string[] = [];
  const emitErrors: string[] = [];
  const emitter = async (n: number) => {
    for (let i = 0; i < 5; i++) {
      const run = await svc(
        [
          'emit',
          '--cause',
          'drift',
          '--subject-kind',
          'service',
          '--subject-key',
          `p${n}-${i}`,
          '--headline',
          `from emitter ${n}`,
        ],
        env,
      );
      if (run.code === 0) emitted.push(run.stdout.trim());
      else emitErrors.push(`exit ${run.code}: ${run.stderr}`);
      if (LOCKED.test(run.stderr)) emitErrors.push(run.stderr);
    }
  };
  await Promise.all([emitter(1), emitter(2), emitter(3), emitter(4)]);
  busy = false;
  await visitor;

  assert.deepEqual(emitErrors, []);
  assert.equal(emitted.length, 20);
  await until(
    () => {
      const seen = new Set(rx.received.map((r) => `${JSON.parse(r.body).message} ${r.path}`));
      return emitted.every((id) => seen.has(`${id} /a`) && seen.has(`${id} /b`));
    },
    { limitMs: 60_000 },
  );
  assert.ok(apiAnswers.length > 0);
  assert.deepEqual(
    apiAnswers.filter((a) => a.status !== 200 && a.status !== 204),
    [],
    'every API call answered',
  );
  assert.doesNotMatch(web.log(), LOCKED);
  assert.doesNotMatch(worker.log(), LOCKED);
  assert.equal(web.proc.exitCode, null);
  assert.equal(worker.proc.exitCode, null);
});

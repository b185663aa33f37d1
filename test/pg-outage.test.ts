// PostgreSQL stopped and started again under traffic, on a private server of this test's own (never the shared one):
// no svc process exits; pages answer a plain 503, the API a 503 problem with Retry-After, /readyz 503 and /healthz 200;
// `svc emit` fails in one line with exit 1; the worker logs the outage once and resumes; the LISTEN session reconnects;
// afterwards every acknowledged message reaches every channel.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/connect.ts';
import { isDatabaseUnavailable } from '../src/db/errors.ts';
import { createDeliveryWorker } from '../src/features/delivery/delivery.worker.ts';
import { LISTENER_APPLICATION_NAME, wireWakeups } from '../src/features/delivery/wakeup.listener.ts';
import { buildApiUser } from './helpers/api.ts';
import { TestClient, buildTestApp, type TestApp } from './helpers/app.ts';
import type { TestDatabase } from './helpers/db.ts';
import { until } from './helpers/delivery.ts';
import { buildAccount, signIn } from './helpers/factories.ts';
import { buildChannel, buildMessage } from './helpers/outbox.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from './helpers/private-postgres.ts';
import { useReceiver } from './helpers/receiver.ts';
import { migrateWithSvc, spawnSvc, type SvcChild, svc } from './helpers/svc.ts';

const _bin = fileURLToPath(new URL('../bin/svc.js', import.meta.url));

/** How often `line` appears in `log`. */
const count = (log: string, line: string) => log.split(line).length - 1;

describe('PostgreSQL stopped and started again', { skip: privatePostgresMissing }, () => {
  let server: PrivatePostgres;
  let tdb: TestDatabase;
  let t: TestApp;
  const children: SvcChild[] = [];
  const receiver = useReceiver();

  before(async () => {
    server = await startPrivatePostgres();
    tdb = await migrateWithSvc({ kind: 'postgres', url: server.url('svc') });
    t = buildTestApp(tdb);
  });

  after(async () => {
    for (const child of children) child.proc.kill('SIGKILL');
    await tdb?.db.destroy();
    await server?.remove();
  });

  test('serve, worker and emit under traffic: no exit, 503s meanwhile, every acknowledged message delivered afterwards', async (ctx) => {
    const rx = receiver();
    await buildChannel(t.deps.db, { url: `${rx.url}/a` });
    await buildChannel(t.deps.db, { url: `${rx.url}/b` });
    const admin = await buildAccount(t, { role: 'admin' });
    const { token } = await buildApiUser(t, 'admin');
    const env = { DATABASE_URL: server.url('svc'), SVC_EXTERNAL_URL: 'http://localhost', PORT: '0', HOST: '127.0.0.1' };

    const web = spawnSvc(['serve', '--no-worker'], env);
    const worker = spawnSvc(['worker'], env);
    children.push(web, worker);
    await until(() => /svc listening/.test(web.log()) && /delivery worker started/.test(worker.log()), {
      limitMs: 60_000,
    });
    const base = `http://127.0.0.1:${/"port":(\d+)/.exec(web.log())![1]}`;
    // The test client, talking to the child over HTTP (the child takes http://localhost as its own origin).
    const remote = {
      request: (url: string, init: RequestInit) =>
        fetch(url.replace('http://localhost', base), { ...init, redirect: 'manual' }),
    };
    const browser = await signIn({ client: () => new TestClient(remote as never) } as TestApp, admin);
    assert.equal((await browser.get('/')).status, 200);
    const api = () => fetch(`${base}/api/messages`, { headers: { authorization: `Bearer ${token}` } });

    // Steady traffic: two emitters, a page load and an API call in turn; every answer is kept.
    const acknowledged: string[] = [];
    const failedEmits: { code: number; stderr: string }[] = [];
    const pageStatuses = new Set<number>();
    const apiStatuses = new Set<number>();
    let traffic = true;
    ctx.signal.addEventListener('abort', () => (traffic = false)); // a failed assertion ends the traffic too
    const emitter = async () => {
      while (traffic) {
        const run = await svc(
          [
            'emit',
            '--cause',
            'drift',
            '--subject-kind',
            'service',
            '--subject-key',
            `k-${acknowledged.length}`,
            '--headline',
            'outage test',
          ],
          env,
        );
        if (run.code === 0) acknowledged.push(run.stdout.trim());
        else failedEmits.push({ code: run.code, stderr: run.stderr });
      }
    };
    const visitor = async () => {
      while (traffic) {
        pageStatuses.add((await browser.get('/')).status);
        apiStatuses.add((await api()).status);
      }
    };
    const running = [emitter(), emitter(), visitor()];
    await until(() => acknowledged.length >= 4 && rx.received.length >= 8, { limitMs: 60_000 });

    await server.stop('fast');
    const stoppedAt = Date.now();
    try {
      // A page: the plain 503 page, no stack.
      let page = await browser.get('/');
      await until(
        async () => {
          page = await browser.get('/');
          return page.status === 503;
        },
        { limitMs: 20_000 },
      );
      assert.match(page.text, /The database is unavailable at the moment/);
      assert.doesNotMatch(page.text, /Something went wrong|\bat \S+ \(|Error:/);
      assert.equal(page.headers.get('retry-after'), '5');
      // The API: a 503 problem with Retry-After.
      const problem = await api();
      assert.equal(problem.status, 503);
      assert.match(problem.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(problem.headers.get('retry-after'), '5');
      assert.equal((await problem.json()).type, 'urn:svc:problem:database-unavailable');
      assert.equal((await fetch(`${base}/readyz`)).status, 503);
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      // A command: one line, exit 1.
      const emit = await svc(
        ['emit', '--cause', 'drift', '--subject-kind', 'service', '--subject-key', 'during', '--headline', 'refused'],
        env,
      );
      assert.equal(emit.code, 1, emit.stderr);
      assert.equal(emit.stdout, '');
      assert.equal(emit.stderr.trim().split('\n').length, 1, emit.stderr);
      assert.match(
        emit.stderr,
        /^svc: cannot reach the database \(PostgreSQL at 127\.0\.0\.1:\d+\): connect ECONNREFUSED/,
      );
      // The outage lasts a while under traffic; the worker notices it.
      await until(
        () => /delivery worker could not claim deliveries/.test(worker.log()) && Date.now() - stoppedAt >= 8_000,
        { limitMs: 60_000 },
      );
    } finally {
      await server.start();
    }
    const restartedAt = Date.now();
    const outageMs = restartedAt - stoppedAt;

    await until(
      () =>
        /delivery listener connected again/.test(worker.log()) &&
        /delivery worker can claim deliveries again/.test(worker.log()),
      { limitMs: 30_000 },
    );
    const listenBackMs = Date.now() - restartedAt;
    await until(async () => (await fetch(`${base}/readyz`)).status === 200, { limitMs: 30_000 });
    await until(async () => (await browser.get('/')).status === 200, { limitMs: 30_000 });
    // Real-time delivery after the return: an emit reaches both channels.
    const before = rx.received.length;
    const emittedAt = Date.now();
    const late = await svc(
      [
        'emit',
        '--cause',
        'drift',
        '--subject-kind',
        'service',
        '--subject-key',
        'after',
        '--headline',
        'after the outage',
      ],
      env,
    );
    const emitMs = Date.now() - emittedAt;
    assert.equal(late.code, 0, late.stderr);
    acknowledged.push(late.stdout.trim());
    await until(
      () => rx.received.slice(before).filter((r) => JSON.parse(r.body).message === late.stdout.trim()).length === 2,
      { limitMs: 30_000 },
    );
    const deliveredAfterMs = Date.now() - emittedAt;

    traffic = false;
    await Promise.all(running);
    await until(
      () => {
        const seen = new Set(rx.received.map((r) => `${JSON.parse(r.body).message} ${r.path}`));
        return acknowledged.every((id) => seen.has(`${id} /a`) && seen.has(`${id} /b`));
      },
      { limitMs: 60_000 },
    );

    assert.equal(web.proc.exitCode, null, 'svc serve is still running');
    assert.equal(worker.proc.exitCode, null, 'svc worker is still running');
    assert.equal(web.proc.signalCode, null);
    assert.equal(worker.proc.signalCode, null);
    assert.deepEqual(
      [...pageStatuses].filter((s) => s !== 200 && s !== 503),
      [],
      'pages answered 200 or 503, never anything else',
    );
    assert.deepEqual(
      [...apiStatuses].filter((s) => s !== 200 && s !== 503),
      [],
      'the API answered 200 or 503, never anything else',
    );
    // One line when the database went away, one when it came back, per concern (claims, the LISTEN session).
    assert.equal(count(worker.log(), 'delivery worker could not claim deliveries'), 1, worker.log());
    assert.equal(count(worker.log(), 'delivery worker can claim deliveries again'), 1, worker.log());
    assert.equal(count(worker.log(), 'delivery listener disconnected'), 1, worker.log());
    assert.equal(count(worker.log(), 'delivery listener connected again'), 1, worker.log());
    for (const failed of failedEmits) {
      assert.equal(failed.code, 1, failed.stderr);
      assert.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
    }
    // At least once, and twice only for what was in flight when the database stopped (4 per channel at most).
    const perDelivery = new Map<string, number>();
    for (const r of rx.received)
      perDelivery.set(
        `${JSON.parse(r.body).message} ${r.path}`,
        (perDelivery.get(`${JSON.parse(r.body).message} ${r.path}`) ?? 0) + 1,
      );
    const duplicates = [...perDelivery.values()].reduce((n, c) => n + c - 1, 0);
    assert.ok(duplicates <= 8, `${duplicates} duplicate deliveries`);
    // And both still stop cleanly.
    for (const child of [web, worker]) {
      const exited = new Promise<number | null>((resolve) => child.proc.once('close', resolve));
      child.proc.kill('SIGTERM');
      assert.equal(await exited, 0, child.log());
    }
    ctx.diagnostic(
      `outage ${outageMs} ms; emits acknowledged ${acknowledged.length}, refused ${failedEmits.length}; deliveries ${rx.received.length} for ${acknowledged.length * 2} owed, ${duplicates} duplicate(s); pages ${[...pageStatuses]}, API ${[...apiStatuses]}; LISTEN back ${listenBackMs} ms after restart; an emit then took ${emitMs} ms and its deliveries arrived ${deliveredAfterMs - emitMs} ms after it returned`,
    );
  });

  test('in one process: a checked-out client losing its server fails its query (no crash), and LISTEN wakes the worker again', async () => {
    const rx = receiver();
    await sql`delete from deliveries`.execute(t.deps.db);
    await sql`delete from channels`.execute(t.deps.db);
    await buildChannel(t.deps.db, { url: `${rx.url}/rt` });
    // A worker that only ever polls every 10 minutes: a quick delivery can only come from a wake-up.
    const worker = createDeliveryWorker(t.deps, { pollMs: 600_000 });
    const stopWakeups = wireWakeups(t.deps, worker);
    worker.start();
    const listening = async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME}`.execute(
          t.deps.db,
        )
      ).rows[0]!.n === 1;
    try {
      await until(listening, { limitMs: 20_000 });
      // A client checked out of the pool, idle inside a transaction, when the server stops.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const inTransaction = t.deps.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await held;
        await sql`select 1`.execute(trx);
      });
      const failure = inTransaction.then(
        () => undefined,
        (err: unknown) => err,
      );
      await server.stop('fast');
      try {
        release();
        const err = await failure;
        assert.ok(err !== undefined && isDatabaseUnavailable(err), `the query failed as unavailable: ${String(err)}`);
        await until(() => t.logs.some((l) => l.includes('delivery listener disconnected')), { limitMs: 20_000 });
      } finally {
        await server.start();
      }
      await until(() => t.logs.some((l) => l.includes('delivery listener connected again')), { limitMs: 30_000 });
      const sessions = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME}`.execute(
        t.deps.db,
      );
      assert.equal(sessions.rows[0]!.n, 1, `the LISTEN session is back: ${t.logs.join('')}`);

      // Another process's emit (its own connection and wake-up line): only the NOTIFY can wake this worker.
      const other = { ...(await openDatabase(tdb.database)), database: tdb.database, drop: async () => undefined };
      try {
        const id = await buildMessage(buildTestApp(other));
        await until(() => rx.received.some((r) => JSON.parse(r.body).message === id), { limitMs: 30_000 });
      } finally {
        await other.db.destroy();
      }
    } finally {
      await stopWakeups();
      await worker.stop();
    }
  });
});

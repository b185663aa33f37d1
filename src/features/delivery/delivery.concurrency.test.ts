import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeEach, test } from 'node:test';
import { openDatabase } from '../../db/connect.ts';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { attemptsOf, until as waitUntil } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { useReceiver, type Receiver } from '../../../test/helpers/receiver.ts';
import { claimDue, recordVerdict } from './delivery.service.ts';
import { createDeliveryWorker } from './delivery.worker.ts';

const childScript = fileURLToPath(new URL('../../../test/helpers/delivery-worker-child.ts', import.meta.url));
/** The lease the child worker takes (delivery-worker-child.ts), and the one the in-process workers here take. */
const CHILD_LEASE_MS = 60_000;
const LEASE_MS = 60_000;

/** Waits for a condition that other processes will make true (they start slower than background work in this one). */
const until = (condition: () => Promise<boolean>) => waitUntil(condition, { limitMs: 60_000, everyMs: 10 });

forEachDialect((getDb) => {
  let t: TestApp;
  let rx: Receiver;
  const receiver = useReceiver();
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    rx = receiver();
  });

  /** Every (message, channel path) pair the receiver got, with how often. */
  const receivedPairs = () => {
    const counts = new Map<string, number>();
    for (const r of rx.received) {
      const key = `${JSON.parse(r.body).message} ${r.path}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  };

  async function seed(channels: number, messages: number, now: number) {
    const ids = [];
    for (let i = 0; i < channels; i++) ids.push((await buildChannel(t.deps.db, { url: `${rx.url}/c${i}` })).id);
    for (let i = 0; i < messages; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: ids, now });
    return channels * messages;
  }

  /** Starts the child worker script; resolves its exit code or signal. */
  function child(mode: 'run' | 'drain', extraEnv: Record<string, string> = {}) {
    const proc = spawn(process.execPath, ['--import', 'tsx', childScript], {
      env: {
        ...process.env,
        NODE_NO_WARNINGS: '1',
        SVC_TEST_DATABASE: JSON.stringify(getDb().database),
        SVC_TEST_MODE: mode,
        ...extraEnv,
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stdin!.on('error', () => undefined);
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('close', (code, signal) => resolve({ code, signal })),
    );
    return { proc, exit, output: () => output };
  }

  const channelCounters = async (id: string) => {
    const c = await t.deps.db
      .selectFrom('channels')
      .select(['consecutive_failures', 'last_success_at', 'last_error'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return [c.consecutive_failures, c.last_success_at, c.last_error];
  };
  const deliveredCount = async () =>
    (await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute()).length;

  function assertEachAttemptOnce(total: number) {
    const pairs = receivedPairs();
    assert.equal(rx.received.length, total);
    assert.equal(pairs.size, total);
    assert.ok([...pairs.values()].every((n) => n === 1));
  }

  test('two worker processes on one database never make the same attempt twice', async () => {
    const total = await seed(4, 60, Date.now());
    rx.answer = () => ({ status: 200, delayMs: 20 });
    const a = child('run', { SVC_TEST_WAIT_FOR_GO: '1' });
    const b = child('run', { SVC_TEST_WAIT_FOR_GO: '1' });
    await until(async () => a.output().includes('ready') && b.output().includes('ready'));
    a.proc.stdin!.write('go\n');
    b.proc.stdin!.write('go\n');
    await until(async () => (await deliveredCount()) === total);
    a.proc.kill('SIGTERM');
    b.proc.kill('SIGTERM');
    assert.deepEqual(await a.exit, { code: 0, signal: null });
    assert.deepEqual(await b.exit, { code: 0, signal: null });
    assertEachAttemptOnce(total);
    const counts = [a, b].map((w) => Number(/recorded (\d+)/.exec(w.output())?.[1]));
    assert.ok(
      counts.every((n) => n > 0),
      `both workers took part (${counts.join(' + ')})`,
    );
    assert.equal(counts[0]! + counts[1]!, total);
    const owners = await attemptsOf(t.deps.db);
    assert.equal(owners.length, total);
    assert.ok(owners.every((r) => r.attempt_no === 1));
  });

  test('two workers in one process (separate PostgreSQL pools; SQLite: its one connection) never make the same attempt twice', async () => {
    const total = await seed(4, 50, t.clock.now());
    // better-sqlite3 is synchronous: two connections in one process would block each other's event loop, so SQLite
    // shares one.
    const second = getDb().dialect === 'postgres' ? await openDatabase(getDb().database) : undefined;
    try {
      const a = createDeliveryWorker(t.deps, { concurrency: 8, perChannel: 4 });
      const b = createDeliveryWorker({ ...t.deps, db: second?.db ?? t.deps.db }, { concurrency: 8, perChannel: 4 });
      await Promise.all([a.drain(), b.drain()]);
      await Promise.all([a.stop(), b.stop()]);
    } finally {
      await second?.db.destroy();
    }
    assertEachAttemptOnce(total);
    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts']).execute();
    assert.ok(rows.every((r) => r.state === 'delivered' && r.attempts === 1));
    assert.equal((await attemptsOf(t.deps.db)).length, total);
  });

  test('a lease is exclusive until it expires; then another worker makes the attempt and the late worker records nothing', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/lease` });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const now = t.clock.now();
    const [job, ...more] = await claimDue(t.deps, 'vanished-worker', {
      slots: 10,
      perChannel: 4,
      busy: new Map(),
      leaseMs: LEASE_MS,
    });
    assert.equal(more.length, 0);
    assert.equal(job!.channel_id, ch.id);

    const w = createDeliveryWorker(t.deps, { leaseMs: LEASE_MS });
    await w.drain();
    assert.equal(rx.received.length, 0, 'leased to another worker');
    t.clock.advance(LEASE_MS);
    await w.drain();
    await w.stop();
    assert.equal(rx.received.length, 1);
    const id = deliveryIds.get(ch.id)!;
    assert.equal(
      (await t.deps.db.selectFrom('deliveries').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state,
      'delivered',
    );

    assert.equal(
      await recordVerdict(
        t.deps,
        'vanished-worker',
        job!,
        { kind: 'failed', status: 503, error: 'HTTP 503', excerpt: null },
        now,
        1,
      ),
      false,
    );
    assert.deepEqual(
      (await attemptsOf(t.deps.db, id)).map((a) => a.verdict),
      ['delivered'],
    );
  });

  test('a worker that lost its lease while its request was in flight does not record over the new owner', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/late` });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const id = deliveryIds.get(ch.id)!;
    const row = () => t.deps.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    // A's request is answered late, long after B took the delivery over.
    rx.answer = () => ({ status: 200, delayMs: 2000 });
    const a = createDeliveryWorker(t.deps, { leaseMs: LEASE_MS, outbound: { timeoutMs: 60_000 } });
    const draining = a.drain();
    await until(async () => rx.received.length === 1 && (await row()).lease_owner === a.id);
    // A's lease runs out (as if it had stalled); B claims the delivery and still holds it when A's answer arrives.
    t.clock.advance(LEASE_MS + 1);
    const [job, ...more] = await claimDue(t.deps, 'worker-b', {
      slots: 1,
      perChannel: 1,
      busy: new Map(),
      leaseMs: LEASE_MS,
    });
    assert.deepEqual([job?.id, more.length], [id, 0]);
    await draining; // A got its 200 and tried to record it
    await a.stop();
    assert.equal(a.recorded, 0, "A's verdict was refused");
    assert.deepEqual(
      [(await row()).lease_owner, (await row()).attempts, (await row()).state],
      ['worker-b', 0, 'pending'],
    );
    assert.equal((await attemptsOf(t.deps.db, id)).length, 0);
    assert.deepEqual(await channelCounters(ch.id), [0, null, null], 'nor its channel counters');
    // B's own verdict is recorded as the delivery's first attempt.
    assert.equal(
      await recordVerdict(
        t.deps,
        'worker-b',
        job!,
        { kind: 'failed', status: 503, error: 'HTTP 503', excerpt: null },
        t.clock.now(),
        1,
      ),
      true,
    );
    assert.deepEqual(
      (await attemptsOf(t.deps.db, id)).map((r) => [r.attempt_no, r.verdict]),
      [[1, 'failed']],
    );
  });

  test('stop aborts the attempts in flight and gives their leases back unrecorded; they are delivered later, each counted once', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/slow` });
    for (let i = 0; i < 6; i++)
      await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 10 + i });
    let answered = 0;
    rx.answer = () => (answered++ < 2 ? { status: 200 } : 'hang');
    const a = createDeliveryWorker(t.deps, { concurrency: 2, perChannel: 2, outbound: { timeoutMs: 60_000 } });
    a.start();
    const leased = async () =>
      (await t.deps.db.selectFrom('deliveries').select('id').where('lease_owner', '=', a.id).execute()).length;
    await until(async () => rx.received.length === 4 && (await leased()) === 2); // two delivered, two requests hanging
    await a.stop(0);
    assert.equal(await leased(), 0, 'both hanging attempts are given back');
    assert.equal(rx.received.length, 4);
    assert.equal((await attemptsOf(t.deps.db)).length, 2, 'aborted attempts are not recorded');
    rx.answer = () => ({ status: 200 });
    const b = createDeliveryWorker(t.deps);
    await b.drain();
    await b.stop();
    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts']).execute();
    assert.ok(
      rows.every((r) => r.state === 'delivered' && r.attempts === 1),
      'nothing lost, nothing counted twice',
    );
  });

  test('a worker killed with SIGKILL mid-run (attempts in flight) and a restarted one leave every (message, channel) pair delivered', async () => {
    const total = await seed(3, 20, Date.now());
    let answered = 0;
    rx.answer = () => (answered++ < 10 ? { status: 200 } : 'hang');
    const first = child('run');
    await rx.waitFor(10 + 8); // ten delivered, then all eight slots hanging mid-attempt
    const leased = () =>
      t.deps.db
        .selectFrom('deliveries as d')
        .innerJoin('channels as c', 'c.id', 'd.channel_id')
        .select(['d.message_id', 'c.url'])
        .where('d.lease_owner', 'is not', null)
        .execute();
    const delivered = () => t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute();
    // Killed once the ten answered attempts are recorded and the eight hanging ones leased.
    await until(async () => (await delivered()).length === 10 && (await leased()).length === 8);
    first.proc.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');
    const midway = await t.deps.db.selectFrom('deliveries').select(['state', 'lease_owner']).execute();
    assert.equal(midway.filter((d) => d.state === 'delivered').length, 10);
    const held = await leased();
    const sent = receivedPairs();
    assert.equal(
      held.filter((d) => sent.has(`${d.message_id} ${new URL(d.url).pathname}`)).length,
      8,
      'the dead worker still holds the leases of its eight attempts in flight',
    );

    rx.answer = () => ({ status: 200 });
    const second = child('drain', { SVC_TEST_CLOCK_OFFSET: String(CHILD_LEASE_MS + 1000) });
    assert.deepEqual(await second.exit, { code: 0, signal: null });

    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts']).execute();
    assert.equal(rows.length, total);
    assert.ok(
      rows.every((r) => r.state === 'delivered' && r.attempts === 1),
      'every pair delivered; the interrupted attempt was made again',
    );
    const pairs = receivedPairs();
    assert.equal(pairs.size, total, 'every (message, channel) pair reached the receiver');
    assert.equal(rx.received.length, total + 8, 'only the eight interrupted attempts were repeated (at-least-once)');
  });
});

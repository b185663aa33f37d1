import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, beforeEach, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../db/connect.ts';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { attemptsOf, clearOutbox, until as waitUntil } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries } from '../../../test/helpers/outbox-factories.ts';
import { startReceiver, type Receiver } from '../../../test/helpers/receiver.ts';
import { claimJobs } from './delivery.repo.ts';
import { recordAttempt } from './delivery.service.ts';
import { createDeliveryWorker, DEFAULT_LEASE_MS, QUEUE_TTL_MS } from './delivery.worker.ts';

const childScript = fileURLToPath(new URL('../../../test/helpers/delivery-worker-child.ts', import.meta.url));

/** Waits for a condition that other processes will make true (they start slower than background work in this one). */
const until = (condition: () => Promise<boolean>) => waitUntil(condition, { limitMs: 60_000, everyMs: 10 });

forEachDialect((getDb, dialect) => {
  let t: TestApp;
  let rx: Receiver;
  before(async () => {
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
  });
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    rx.received.length = 0;
    rx.answer = () => ({ status: 200 });
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
      env: { ...process.env, NODE_NO_WARNINGS: '1', SVC_TEST_DATABASE: JSON.stringify(getDb().database), SVC_TEST_MODE: mode, ...extraEnv },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stdin!.on('error', () => undefined);
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('close', (code, signal) => resolve({ code, signal })));
    return { proc, exit, output: () => output };
  }

  const deliveredCount = async () => (await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute()).length;

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
    assert.ok(counts.every((n) => n > 0), `both workers took part (${counts.join(' + ')})`);
    assert.equal(counts[0]! + counts[1]!, total);
    const owners = await attemptsOf(t.deps.db);
    assert.equal(owners.length, total);
    assert.ok(owners.every((r) => r.attempt_no === 1));
  });

  test('two workers in one process (separate PostgreSQL pools; SQLite: its one connection) never make the same attempt twice', async () => {
    const total = await seed(4, 50, t.clock.now());
    // better-sqlite3 is synchronous: two connections in one process would block each other's event loop, so SQLite shares one.
    const second = getDb().dialect === 'postgres' ? openDatabase(getDb().database) : undefined;
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
    const [job, ...more] = await claimJobs(t.deps.db, t.deps.dialect, {
      owner: 'vanished-worker', now, leaseUntil: now + DEFAULT_LEASE_MS, limit: 10, perChannel: 4, exclude: [], quotas: new Map(), window: 100,
    });
    assert.equal(more.length, 0);
    assert.equal(job!.channel_id, ch.id);

    const w = createDeliveryWorker(t.deps);
    await w.drain();
    assert.equal(rx.received.length, 0, 'leased to another worker');
    t.clock.advance(DEFAULT_LEASE_MS);
    await w.drain();
    await w.stop();
    assert.equal(rx.received.length, 1);
    const id = deliveryIds.get(ch.id)!;
    assert.equal((await t.deps.db.selectFrom('deliveries').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state, 'delivered');

    assert.equal(await recordAttempt(t.deps, job!, 'vanished-worker', { kind: 'failed', status: 503, error: 'HTTP 503' }, now), false);
    assert.deepEqual((await attemptsOf(t.deps.db, id)).map((a) => a.verdict), ['delivered']);
  });

  test('a delivery claimed ahead whose lease expires is taken by another worker; the first worker never sends it', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/ahead` });
    const base = t.clock.now();
    const messages: string[] = [];
    for (let i = 3; i > 0; i--) messages.push((await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: base - i })).message.id);
    const [first, second, third] = messages as [string, string, string];
    const sentOf = (message: string) => rx.received.filter((r) => JSON.parse(r.body).message === message).length;
    // The second message's first request is answered late, so the third waits in the first worker's queue meanwhile.
    let heldBack = false;
    rx.answer = (r) => (JSON.parse(r.body).message === second && !heldBack ? ((heldBack = true), { status: 200, delayMs: 1500 }) : { status: 200 });
    const a = createDeliveryWorker(t.deps, { concurrency: 1, perChannel: 1, idlePollMs: 5, outbound: { timeoutMs: 60_000 } });
    a.start();
    const leasedTo = async (owner: string) =>
      (await t.deps.db.selectFrom('deliveries').select('message_id').where('lease_owner', '=', owner).execute()).map((d) => d.message_id);
    await until(async () => sentOf(second) === 1 && (await leasedTo(a.id)).includes(third));
    assert.equal(sentOf(first), 1);
    assert.equal(sentOf(third), 0, 'claimed ahead, not sent: its channel allows one request at a time');

    // The first worker's leases run out (as if it had stalled); another worker takes both deliveries over.
    t.clock.advance(DEFAULT_LEASE_MS + 1);
    const b = createDeliveryWorker(t.deps);
    await b.drain();
    await b.stop();
    assert.equal(sentOf(third), 1, 'the other worker sent it');

    // The first worker's late request finishes; its queued delivery is stale and is not sent.
    await until(async () => (rx.inFlight.get('/ahead') ?? 0) === 0);
    await a.stop(0);
    assert.equal(sentOf(third), 1, 'never sent by the worker whose lease expired');
    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts', 'lease_owner']).execute();
    assert.ok(rows.every((r) => r.state === 'delivered' && r.attempts === 1 && r.lease_owner === null));
    assert.equal((await attemptsOf(t.deps.db)).length, 3, "the late worker's verdict is not recorded over the other's");
  });

  // A claim's queue TTL counts from before it ran, as its lease does: a claim that stalled (here on a row lock another
  // transaction holds) past the TTL sends nothing it claimed, since its check that the channel is enabled is that old.
  if (dialect === 'postgres') test('what a claim that stalled past the queue TTL leased is not sent: its channel was disabled meanwhile', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/stall` });
    const base = t.clock.now();
    const first = (await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: base - 2 })).deliveryIds.get(ch.id)!;
    const second = (await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: base - 1 })).deliveryIds.get(ch.id)!;
    // Answered late enough for the lock below to be taken first.
    rx.answer = () => ({ status: 200, delayMs: 1000 });
    const w = createDeliveryWorker(t.deps, { concurrency: 1, perChannel: 1, idlePollMs: 5 });
    w.start();
    // While the first request is in flight, another transaction locks its delivery: the cycle that records its verdict
    // and claims the second delivery (one statement, one snapshot, in which the channel is enabled) waits for the lock.
    await rx.waitFor(1);
    let unlock!: () => void;
    const unlocked = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.deps.db.transaction().execute(async (trx) => {
      await sql`select id from deliveries where id = ${first} for update`.execute(trx);
      locked();
      await unlocked;
    });
    await lockHeld;
    const waitingOnLock = async () =>
      Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(t.deps.db)).rows[0]!.n) > 0;
    await until(waitingOnLock);
    t.clock.advance(QUEUE_TTL_MS + 1);
    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', ch.id).execute();
    unlock();
    await holder;
    await until(async () => (await t.deps.db.selectFrom('deliveries').select('state').where('id', '=', first).executeTakeFirstOrThrow()).state === 'delivered');
    await w.stop();
    assert.equal(rx.received.length, 1, 'the second delivery was never sent');
    const row = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts', 'lease_owner']).where('id', '=', second).executeTakeFirstOrThrow();
    assert.equal(row.attempts, 0);
    assert.equal(row.lease_owner, null, 'its lease was given back');
  });

  test('stop gives back the leases of deliveries claimed ahead, unsent, and they are delivered later', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/slow` });
    for (let i = 0; i < 6; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 10 + i });
    let answered = 0;
    rx.answer = () => (answered++ === 0 ? { status: 200 } : 'hang');
    const a = createDeliveryWorker(t.deps, { concurrency: 1, perChannel: 1, idlePollMs: 5, outbound: { timeoutMs: 60_000 } });
    a.start();
    const leased = async () => (await t.deps.db.selectFrom('deliveries').select('id').where('lease_owner', '=', a.id).execute()).length;
    await until(async () => rx.received.length === 2 && (await leased()) === 2); // one request hanging, one delivery queued
    await a.stop(0);
    assert.equal(await leased(), 0, 'the hanging attempt and the queued delivery are both given back');
    assert.equal(rx.received.length, 2);
    rx.answer = () => ({ status: 200 });
    const b = createDeliveryWorker(t.deps);
    await b.drain();
    await b.stop();
    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts']).execute();
    assert.ok(rows.every((r) => r.state === 'delivered' && r.attempts === 1), 'nothing lost, nothing counted twice');
  });

  test('a worker killed with SIGKILL mid-run (attempts in flight and deliveries claimed ahead) and a restarted one leave every (message, channel) pair delivered', async () => {
    const total = await seed(3, 20, Date.now());
    let answered = 0;
    rx.answer = () => (answered++ < 10 ? { status: 200 } : 'hang');
    const first = child('run');
    await rx.waitFor(10 + 8); // ten delivered, then all eight slots hanging mid-attempt
    // Channels that answered were claimed ahead: wait until the dead worker's queue holds some of those leases too.
    const leased = () => t.deps.db.selectFrom('deliveries as d').innerJoin('channels as c', 'c.id', 'd.channel_id').select(['d.message_id', 'c.url']).where('d.lease_owner', 'is not', null).execute();
    // Both at one moment: the ten answered attempts recorded (their leases released) and, beside the eight hanging
    // attempts, leases on deliveries claimed ahead. Waiting on the leases alone could kill the worker before its
    // group commit recorded the ten; queued leases are given back a second after their claim, so kill at once.
    const delivered = () => t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute();
    await until(async () => (await delivered()).length === 10 && (await leased()).length > 8);
    first.proc.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');
    const midway = await t.deps.db.selectFrom('deliveries').select(['state', 'lease_owner']).execute();
    assert.equal(midway.filter((d) => d.state === 'delivered').length, 10);
    const held = await leased();
    const sent = receivedPairs();
    const heldInFlight = held.filter((d) => sent.has(`${d.message_id} ${new URL(d.url).pathname}`));
    assert.equal(heldInFlight.length, 8, 'the dead worker still holds the leases of its eight attempts in flight');
    assert.ok(held.length > 8, 'and of deliveries it had claimed ahead and not sent');

    rx.answer = () => ({ status: 200 });
    const second = child('drain', { SVC_TEST_CLOCK_OFFSET: String(DEFAULT_LEASE_MS + 1000) });
    assert.deepEqual(await second.exit, { code: 0, signal: null });

    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts']).execute();
    assert.equal(rows.length, total);
    assert.ok(rows.every((r) => r.state === 'delivered' && r.attempts === 1), 'every pair delivered; the interrupted attempt was made again');
    const pairs = receivedPairs();
    assert.equal(pairs.size, total, 'every (message, channel) pair reached the receiver');
    assert.equal(rx.received.length, total + 8, 'only the eight interrupted attempts were repeated (at-least-once)');
  });
});

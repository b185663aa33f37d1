import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, afterEach, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { allowTestLoopback, attemptsOf, clearOutbox, fixtureResolver, until } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries } from '../../../test/helpers/outbox-factories.ts';
import { closedPort, HOOK_TEST_CERT, startReceiver, type Receiver } from '../../../test/helpers/receiver.ts';
import { sql } from 'kysely';
import { openPostgresSession } from '../../db/connect.ts';
import { CLAIM_SESSION_SETTINGS, claimJobs, claimPlan, recordAndClaimPg, recordAndClaimPlan } from './delivery.repo.ts';
import { attemptRecords, recordAttempts } from './delivery.service.ts';
import { createDeliveryWorker, type DeliveryWorker, type WorkerOptions } from './delivery.worker.ts';

/** Verifies a signature the way a receiver would, independently of the service's code. */
function verify(secret: string, headers: Record<string, unknown>, body: string): boolean {
  const ts = String(headers['x-svc-timestamp']);
  const expected = 'v1=' + crypto.createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
  const got = String(headers['x-svc-signature'] ?? '');
  return got.length === expected.length && crypto.timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

forEachDialect((getDb, dialect) => {
  let t: TestApp;
  let rx: Receiver;
  let tlsRx: Receiver;
  before(async () => {
    rx = await startReceiver();
    tlsRx = await startReceiver({ tls: true });
  });
  after(async () => {
    await rx.close();
    await tlsRx.close();
  });
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    for (const r of [rx, tlsRx]) {
      r.received.length = 0;
      r.connections = 0;
      r.answer = () => ({ status: 200, body: 'ok' });
    }
  });

  let workers: DeliveryWorker[] = [];
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop(0)));
    workers = [];
  });
  const worker = (options: WorkerOptions = {}) => {
    const w = createDeliveryWorker(t.deps, { ...options, outbound: { timeoutMs: 3000, ...options.outbound } });
    workers.push(w);
    return w;
  };
  const delivery = (id: string) => t.deps.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const attempts = (id: string) => attemptsOf(t.deps.db, id);
  const channel = (id: string) => t.deps.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('POSTs the stored body bytes to every channel, with the timestamp, a verifiable signature only with a secret, and no bearer header', async () => {
    const secret = 'channel-secret-✓-123';
    const signed = await buildChannel(t.deps.db, { url: `${rx.url}/signed?x=1`, secret });
    const plain = await buildChannel(t.deps.db, { url: `${rx.url}/plain` });
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [signed.id, plain.id], now: t.clock.now(), census: 3 });
    await worker().drain();

    assert.equal(rx.received.length, 2);
    const bySigned = rx.received.find((r) => r.path === '/signed?x=1')!;
    const byPlain = rx.received.find((r) => r.path === '/plain')!;
    for (const r of [bySigned, byPlain]) {
      assert.equal(r.method, 'POST');
      assert.equal(r.body, message.body, 'the exact stored bytes');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['x-svc-timestamp'], String(Math.floor(t.clock.now() / 1000)));
      assert.equal(r.headers.authorization, undefined);
      assert.equal(JSON.parse(r.body).message, message.id);
    }
    assert.ok(verify(secret, bySigned.headers, bySigned.body), 'signature verifies with the secret');
    assert.ok(!verify('another secret', bySigned.headers, bySigned.body));
    assert.equal(byPlain.headers['x-svc-signature'], undefined);

    for (const id of deliveryIds.values()) {
      const d = await delivery(id);
      assert.equal(d.state, 'delivered');
      assert.equal(d.delivered_at, t.clock.now());
      assert.equal(d.attempts, 1);
      assert.equal(d.lease_owner, null);
      const a = await attempts(id);
      assert.deepEqual(a.map((x) => [x.attempt_no, x.verdict, x.status_code, x.error]), [[1, 'delivered', 200, null]]);
    }
    assert.equal((await channel(signed.id)).last_success_at, t.clock.now());
    // The message row is untouched by delivery.
    assert.deepEqual(await t.deps.db.selectFrom('messages').selectAll().where('id', '=', message.id).executeTakeFirst(), message);
  });

  test('each verdict class: 2xx delivered; 3xx (not followed), 4xx, 5xx, timeout, refused, DNS and TLS failures failed', async () => {
    rx.answer = (r) => {
      if (r.path === '/204') return { status: 204 };
      if (r.path === '/302') return { status: 302, headers: { location: `${rx.url}/followed` } };
      if (r.path === '/404') return { status: 404 };
      if (r.path === '/503') return { status: 503, body: 'x'.repeat(64 * 1024) };
      if (r.path === '/hang') return 'hang';
      return { status: 200 };
    };
    const refusedPort = await closedPort();
    const cases: [string, 'delivered' | 'failed', number | null, string | null][] = [
      [`${rx.url}/200`, 'delivered', 200, null],
      [`${rx.url}/204`, 'delivered', 204, null],
      [`${rx.url}/302`, 'failed', 302, 'redirect 302 not followed'],
      [`${rx.url}/404`, 'failed', 404, 'HTTP 404'],
      [`${rx.url}/503`, 'failed', 503, 'HTTP 503'],
      [`${rx.url}/hang`, 'failed', null, 'timed out after 3 s'],
      [`http://127.0.0.1:${refusedPort}/`, 'failed', null, 'connection refused'],
      [`https://no-such-name.test/hook`, 'failed', null, 'DNS lookup failed'],
      [`https://hook.test:${tlsRx.port}/untrusted`, 'failed', null, 'TLS certificate not trusted'],
    ];
    const channels = [];
    for (const [url] of cases) channels.push(await buildChannel(t.deps.db, { url }));
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: channels.map((c) => c.id), now: t.clock.now() });
    const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
    await worker({ outbound: { resolver, policy: allowTestLoopback } }).drain();

    for (const [i, [url, verdict, status, error]] of cases.entries()) {
      const c = channels[i]!;
      const d = await delivery(deliveryIds.get(c.id)!);
      assert.equal(d.state, verdict === 'delivered' ? 'delivered' : 'pending', url);
      const [a] = await attempts(d.id);
      assert.deepEqual([a!.verdict, a!.status_code, a!.error], [verdict, status, error], url);
      const ch = await channel(c.id);
      assert.equal(ch.consecutive_failures, verdict === 'delivered' ? 0 : 1, url);
      assert.equal(ch.last_error, error, url);
    }
    assert.ok(!rx.received.some((r) => r.path === '/followed'), 'the redirect was not followed');
    assert.equal(tlsRx.received.length, 0, 'nothing was posted over the untrusted connection');
    assert.deepEqual(t.logs, [], 'delivery failures are never log lines');
  });

  test('TLS: a trusted certificate delivers; the default address policy refuses the same internal target before connecting', async () => {
    const ch = await buildChannel(t.deps.db, { url: `https://hook.test:${tlsRx.port}/tls` });
    const first = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
    await worker({ outbound: { resolver, policy: allowTestLoopback, extraCa: [HOOK_TEST_CERT] } }).drain();
    assert.equal((await delivery(first.deliveryIds.get(ch.id)!)).state, 'delivered');
    assert.equal(tlsRx.received.length, 1);

    const second = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const connectionsBefore = tlsRx.connections;
    await worker({ outbound: { resolver, extraCa: [HOOK_TEST_CERT] } }).drain();
    const [a] = await attempts(second.deliveryIds.get(ch.id)!);
    assert.equal(a!.error, 'blocked: resolves to an internal address');
    assert.equal(tlsRx.received.length, 1);
    assert.equal(tlsRx.connections, connectionsBefore, 'no connection was even opened');
  });

  test('names resolving to internal addresses (all, one of several, IPv4 inside IPv6) are never contacted', async () => {
    const resolver = fixtureResolver({
      'internal.test': ['10.0.0.5'],
      'metadata.test': ['169.254.169.254'],
      'mixed.test': ['127.0.0.1', '169.254.169.254'],
      'mixed6.test': ['127.0.0.1', 'fd00::1'],
      'mapped.test': ['::ffff:10.0.0.1'],
      'loopback6.test': ['::1'],
    });
    const names = ['internal.test', 'metadata.test', 'mixed.test', 'mixed6.test', 'mapped.test', 'loopback6.test'];
    const channels = [];
    for (const n of names) channels.push(await buildChannel(t.deps.db, { url: `https://${n}:${tlsRx.port}/x` }));
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: channels.map((c) => c.id), now: t.clock.now() });
    await worker({ outbound: { resolver, policy: allowTestLoopback, extraCa: [HOOK_TEST_CERT] } }).drain();
    for (const c of channels) {
      const [a] = await attempts(deliveryIds.get(c.id)!);
      assert.deepEqual([a!.verdict, a!.error], ['failed', 'blocked: resolves to an internal address'], c.url);
      assert.equal((await channel(c.id)).last_error, 'blocked: resolves to an internal address');
    }
    assert.equal(tlsRx.connections, 0);
  });

  test('rebinding: a name vetted as public is pinned for its attempt; internal on the next lookup is refused', async () => {
    const resolver = fixtureResolver({ 'hook.test': (call) => (call === 1 ? ['127.0.0.1'] : ['10.0.0.1']) });
    const ch = await buildChannel(t.deps.db, { url: `https://hook.test:${tlsRx.port}/rebind` });
    const w = worker({ outbound: { resolver, policy: allowTestLoopback, extraCa: [HOOK_TEST_CERT] } });
    const first = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    await w.drain();
    assert.equal((await delivery(first.deliveryIds.get(ch.id)!)).state, 'delivered');
    assert.deepEqual(resolver.calls, ['hook.test'], 'one lookup: the connection used the vetted address, not a second answer');

    const second = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    await w.drain();
    const [a] = await attempts(second.deliveryIds.get(ch.id)!);
    assert.equal(a!.error, 'blocked: resolves to an internal address');
    assert.equal(tlsRx.received.length, 1);
    await w.stop();
  });

  test('the full retry schedule: five attempts over about an hour, then dead-lettered; the message is untouched', async () => {
    rx.answer = () => ({ status: 503 });
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/down`, secret: 's' });
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const id = deliveryIds.get(ch.id)!;
    const w = worker();
    const start = t.clock.now();
    const times: number[] = [];
    const gaps = [60_000, 5 * 60_000, 15 * 60_000, 40 * 60_000];
    await w.drain();
    times.push(t.clock.now());
    for (const [i, gap] of gaps.entries()) {
      const d = await delivery(id);
      assert.equal(d.state, 'pending');
      assert.equal(d.attempts, i + 1);
      assert.ok(d.next_attempt_at >= t.clock.now() + gap && d.next_attempt_at <= t.clock.now() + gap * 1.1, `gap ${i + 1} within jitter`);
      t.clock.advance(gap - 1); // not yet due
      await w.drain();
      assert.equal(rx.received.length, i + 1, 'nothing sent before the next attempt is due');
      t.clock.t = d.next_attempt_at;
      await w.drain();
      times.push(t.clock.now());
      assert.equal(rx.received.length, i + 2);
    }
    const dead = await delivery(id);
    assert.equal(dead.state, 'dead');
    assert.equal(dead.attempts, 5);
    assert.equal(dead.last_error, 'HTTP 503');
    const span = times.at(-1)! - start;
    assert.ok(span >= 61 * 60_000 && span <= 61 * 60_000 * 1.1, 'about one hour in all');
    t.clock.advance(24 * 60 * 60_000);
    await w.drain();
    assert.equal(rx.received.length, 5, 'nothing after dead-lettering');

    assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.verdict, a.status_code, a.error]), [1, 2, 3, 4, 5].map((n) => [n, 'failed', 503, 'HTTP 503']));
    for (const [i, r] of rx.received.entries()) {
      assert.equal(r.body, message.body, 'identical body on every retry');
      assert.equal(r.headers['x-svc-timestamp'], String(Math.floor(times[i]! / 1000)), 'timestamp of that attempt');
      assert.ok(verify('s', r.headers, r.body));
    }
    assert.equal((await channel(ch.id)).consecutive_failures, 5);
    assert.deepEqual(await t.deps.db.selectFrom('messages').selectAll().where('id', '=', message.id).executeTakeFirst(), message);
    assert.deepEqual(t.logs, []);
  });

  test('a success resets the channel\'s consecutive failures', async () => {
    let fail = true;
    rx.answer = () => (fail ? { status: 500 } : { status: 200 });
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/flaky` });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const w = worker();
    await w.drain();
    assert.equal((await channel(ch.id)).consecutive_failures, 2);
    fail = false;
    t.clock.advance(2 * 60_000);
    await w.drain();
    const after = await channel(ch.id);
    assert.equal(after.consecutive_failures, 0);
    assert.equal(after.last_success_at, t.clock.now());
    assert.equal(after.last_error, 'HTTP 500', 'the last error stays visible with its time');
  });

  test('verdicts recorded together keep the channel counters in order: a success resets, failures after it count', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/batch` });
    for (let i = 0; i < 4; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const now = t.clock.now();
    const jobs = await claimJobs(t.deps.db, t.deps.dialect, { owner: 'w1', now, leaseUntil: now + 60_000, limit: 4, perChannel: 4, exclude: [], quotas: new Map(), window: 16 });
    assert.equal(jobs.length, 4);
    const failed = { kind: 'failed', status: 500, error: 'HTTP 500' } as const;
    const ok = { kind: 'delivered', status: 200 } as const;
    assert.equal(await recordAttempts(t.deps, 'w1', [failed, ok, failed].map((verdict, i) => ({ job: jobs[i]!, verdict, startedAt: now }))), 3);
    let c = await channel(ch.id);
    assert.deepEqual([c.consecutive_failures, c.last_error, c.last_success_at], [1, 'HTTP 500', now]);
    t.clock.advance(5000);
    assert.equal(await recordAttempts(t.deps, 'w1', [{ job: jobs[3]!, verdict: ok, startedAt: now }]), 1);
    c = await channel(ch.id);
    assert.deepEqual([c.consecutive_failures, c.last_success_at], [0, t.clock.now()]);
    assert.equal(await recordAttempts(t.deps, 'someone-else', [{ job: jobs[0]!, verdict: ok, startedAt: now }]), 0, 'no lease, no record');
    assert.equal((await attemptsOf(t.deps.db)).length, 4);
  });

  test('a claim honours excluded channels and per-channel quotas, and leases each due row to one owner only', async () => {
    const [a, b, c] = [await buildChannel(t.deps.db, { url: `${rx.url}/a` }), await buildChannel(t.deps.db, { url: `${rx.url}/b` }), await buildChannel(t.deps.db, { url: `${rx.url}/c` })];
    for (let i = 0; i < 3; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [a!.id, b!.id, c!.id], now: t.clock.now() });
    const now = t.clock.now();
    const claim = (owner: string, p: { exclude: string[]; quotas: Map<string, number>; perChannel: number }) =>
      claimJobs(t.deps.db, t.deps.dialect, { owner, now, leaseUntil: now + 60_000, limit: 10, window: 40, ...p });
    const first = await claim('w1', { exclude: [a!.id], quotas: new Map([[b!.id, 1]]), perChannel: 2 });
    const count = (jobs: { channel_id: string }[], id: string) => jobs.filter((j) => j.channel_id === id).length;
    assert.deepEqual([count(first, a!.id), count(first, b!.id), count(first, c!.id)], [0, 1, 2]);
    assert.ok(first.every((j) => j.url.endsWith(j.channel_id === b!.id ? '/b' : '/c') && j.body.length > 0 && j.attempts === 0));
    const second = await claim('w2', { exclude: [], quotas: new Map(), perChannel: 4 });
    assert.deepEqual([count(second, a!.id), count(second, b!.id), count(second, c!.id)], [3, 2, 1]);
    assert.equal(new Set([...first, ...second].map((j) => j.id)).size, 9, 'no row leased twice');
    assert.deepEqual(await claim('w3', { exclude: [], quotas: new Map(), perChannel: 4 }), []);
  });

  test('a claim returns the oldest due deliveries, oldest first (the order the worker starts them in)', async () => {
    const channels = [await buildChannel(t.deps.db, { url: `${rx.url}/o1` }), await buildChannel(t.deps.db, { url: `${rx.url}/o2` })];
    const due = new Map<string, number>();
    // Created in an order unrelated to their due times.
    for (const offset of [7, 2, 9, 4, 1, 8, 3, 6, 5, 10]) {
      const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: channels.map((c) => c.id), now: t.clock.now() - 100 * offset });
      for (const id of deliveryIds.values()) due.set(id, t.clock.now() - 100 * offset);
    }
    const now = t.clock.now();
    const jobs = await claimJobs(t.deps.db, t.deps.dialect, { owner: 'w1', now, leaseUntil: now + 60_000, limit: 12, perChannel: 20, exclude: [], quotas: new Map(), window: 24 });
    const times = jobs.map((j) => due.get(j.id)!);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'oldest first');
    assert.deepEqual(times, [...due.values()].sort((a, b) => a - b).slice(0, 12), 'and the twelve oldest');
  });

  test('the claim reads its candidates in order from the due index, with or without statistics, never all due rows and a sort', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/plan` });
    for (let i = 0; i < 300; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 1000 + i });
    const now = t.clock.now();
    // On the session the worker claims on (PostgreSQL: its own, with CLAIM_SESSION_SETTINGS).
    const database = t.deps.config.database;
    const session = database.kind === 'postgres' ? openPostgresSession(database.url, CLAIM_SESSION_SETTINGS) : t.deps.db;
    const params = { owner: 'w1', now, leaseUntil: now + 60_000, limit: 64, perChannel: 4, exclude: [], quotas: new Map(), window: 256 };
    // The worker's statements are prepared: checked for these parameters and, on PostgreSQL, for any (the generic plan).
    const plans = async () => [await claimPlan(session, t.deps.dialect, params), await claimPlan(session, t.deps.dialect, params, true)];
    const check = (lines: string[], when: string) => {
      const text = lines.join('\n');
      if (t.deps.dialect === 'postgres') {
        assert.match(text, /Index Scan using deliveries_due on deliveries d\b/, `${when}:\n${text}`);
        assert.doesNotMatch(text, /Bitmap Heap Scan on deliveries d\b|Sort Key: d\.next_attempt_at/, `${when}:\n${text}`);
      } else {
        assert.match(text, /SEARCH d USING INDEX deliveries_due \(next_attempt_at<\?\)/, `${when}:\n${text}`);
      }
    };
    try {
      for (const [i, lines] of (await plans()).entries()) check(lines, `before ANALYZE${i ? ', generic' : ''}`);
      await sql`analyze`.execute(t.deps.db);
      for (const [i, lines] of (await plans()).entries()) check(lines, `after ANALYZE${i ? ', generic' : ''}`);
    } finally {
      if (session !== t.deps.db) await session.destroy();
    }
  });

  // SQLite drives its recording from the batch (json_each) by primary key; PostgreSQL's plan depends on statistics.
  if (dialect === 'postgres') test('on PostgreSQL the recording finds its deliveries by primary key, with or without statistics, never by scanning every pending row', async () => {
    const database = t.deps.config.database;
    if (database.kind !== 'postgres') throw new Error('a PostgreSQL test');
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/record-plan` });
    for (let i = 0; i < 300; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 1000 + i });
    const now = t.clock.now();
    const params = { owner: 'w1', now, leaseUntil: now + 60_000, limit: 32, perChannel: 32, exclude: [], quotas: new Map(), window: 64 };
    const jobs = await claimJobs(t.deps.db, t.deps.dialect, params);
    const records = attemptRecords(jobs.map((job) => ({ job, verdict: { kind: 'delivered' as const, status: 200 }, startedAt: now })), now, t.deps.random);
    const session = openPostgresSession(database.url, CLAIM_SESSION_SETTINGS);
    const check = (lines: string[], when: string) => {
      const text = lines.join('\n');
      assert.match(text, /Index Scan using deliveries_pkey on deliveries d\b/, `${when}:\n${text}`);
      assert.doesNotMatch(text, /using deliveries_due on deliveries d\b/, `${when}:\n${text}`);
    };
    try {
      for (const analyzed of [false, true]) {
        if (analyzed) await sql`analyze`.execute(t.deps.db);
        for (const generic of [false, true]) check(await recordAndClaimPlan(session, records, 'w1', now, params, generic), `${analyzed ? 'after' : 'before'} ANALYZE${generic ? ', generic' : ''}`);
      }
    } finally {
      await session.destroy();
    }
  });

  // A lease touches no indexed column and the table leaves room in its pages, so PostgreSQL updates a claimed row in
  // place (HOT) instead of adding an entry to every index; counted by the transaction's own statistics.
  if (dialect === 'postgres') test('on PostgreSQL a claim updates its rows in place (HOT): a lease writes no index entry', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/hot` });
    for (let i = 0; i < 20; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 100 + i });
    const now = t.clock.now();
    const params = { owner: 'w1', now, leaseUntil: now + 60_000, limit: 20, perChannel: 20, exclude: [], quotas: new Map(), window: 40 };
    await t.deps.db.transaction().execute(async (trx) => {
      // The backend's counts not yet flushed to the statistics, which may include earlier transactions': compared before and after.
      const counts = async () => {
        const { rows } = await sql<{ updated: string; hot: string }>`
          select pg_stat_get_xact_tuples_updated('deliveries'::regclass) as updated, pg_stat_get_xact_tuples_hot_updated('deliveries'::regclass) as hot`.execute(trx);
        return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) };
      };
      const before = await counts();
      const { jobs } = await recordAndClaimPg(trx, [], 'w1', now, params);
      assert.equal(jobs.length, 20);
      const after = await counts();
      assert.deepEqual({ updated: after.updated - before.updated, hot: after.hot - before.hot }, { updated: 20, hot: 20 });
    });
  });

  test('one batch over several channels: each delivery, attempt log entry and counter as recorded one by one; the fifth failure dead-letters', async () => {
    const failing = await buildChannel(t.deps.db, { url: `${rx.url}/failing` });
    const healthy = await buildChannel(t.deps.db, { url: `${rx.url}/healthy` });
    await t.deps.db.updateTable('channels').set({ consecutive_failures: 3 }).where('id', '=', failing.id).execute();
    const first = await buildMessageWithDeliveries(t.deps.db, { channelIds: [failing.id, healthy.id], now: t.clock.now() });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [failing.id], now: t.clock.now() + 1 });
    await t.deps.db.updateTable('deliveries').set({ attempts: 4 }).where('id', '=', first.deliveryIds.get(failing.id)!).execute();
    t.clock.advance(10);
    const now = t.clock.now();
    const jobs = await claimJobs(t.deps.db, t.deps.dialect, { owner: 'w1', now, leaseUntil: now + 60_000, limit: 10, perChannel: 4, exclude: [], quotas: new Map(), window: 40 });
    assert.equal(jobs.length, 3);
    const verdicts = jobs.map((job) =>
      job.channel_id === healthy.id
        ? ({ kind: 'delivered', status: 204 } as const)
        : ({ kind: 'failed', status: job.attempts === 4 ? 503 : null, error: job.attempts === 4 ? 'HTTP 503' : 'connection refused' } as const),
    );
    assert.equal(await recordAttempts(t.deps, 'w1', jobs.map((job, i) => ({ job, verdict: verdicts[i]!, startedAt: now - 5 }))), 3);
    const lastFailure = verdicts.filter((v) => v.kind === 'failed').at(-1) as { error: string };
    const f = await channel(failing.id);
    assert.deepEqual([f.consecutive_failures, f.last_error, f.last_error_at, f.last_success_at], [5, lastFailure.error, now, null]);
    const h = await channel(healthy.id);
    assert.deepEqual([h.consecutive_failures, h.last_success_at, h.last_error], [0, now, null]);
    for (const [i, job] of jobs.entries()) {
      const d = await delivery(job.id);
      const [row, ...more] = await attempts(job.id);
      assert.equal(more.length, 0);
      assert.deepEqual([row!.attempt_no, row!.started_at, row!.finished_at, row!.verdict, row!.status_code], [job.attempts + 1, now - 5, now, verdicts[i]!.kind, verdicts[i]!.status]);
      assert.equal(row!.error, verdicts[i]!.kind === 'failed' ? verdicts[i]!.error : null);
      assert.equal(d.attempts, job.attempts + 1);
      assert.deepEqual([d.lease_owner, d.lease_until], [null, null]);
      if (job.channel_id === healthy.id) assert.deepEqual([d.state, d.delivered_at, d.last_error], ['delivered', now, null]);
      else if (job.attempts === 4) assert.deepEqual([d.state, d.next_attempt_at, d.last_error], ['dead', now, 'HTTP 503']);
      else {
        assert.deepEqual([d.state, d.delivered_at, d.last_error], ['pending', null, 'connection refused']);
        assert.ok(d.next_attempt_at > now);
      }
    }
  });

  test("each recorded attempt joins the end of its delivery's attempt log, with its own times, verdict and status", async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/log` });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const id = deliveryIds.get(ch.id)!;
    const verdicts = [
      { kind: 'failed', status: 503, error: 'HTTP 503' },
      { kind: 'failed', status: null, error: 'connection refused' },
      { kind: 'delivered', status: 204 },
    ] as const;
    const expected: unknown[] = [];
    for (const [n, verdict] of verdicts.entries()) {
      const startedAt = t.clock.now();
      const [job, ...more] = await claimJobs(t.deps.db, t.deps.dialect, { owner: 'w1', now: startedAt, leaseUntil: startedAt + 60_000, limit: 5, perChannel: 5, exclude: [], quotas: new Map(), window: 8 });
      assert.equal(more.length, 0);
      assert.equal(job!.attempts, n);
      t.clock.advance(7);
      assert.equal(await recordAttempts(t.deps, 'w1', [{ job: job!, verdict, startedAt }]), 1);
      expected.push({ attempt_no: n + 1, started_at: startedAt, finished_at: t.clock.now(), verdict: verdict.kind, status_code: verdict.status, error: verdict.kind === 'failed' ? verdict.error : null, delivery_id: id });
      t.clock.t = (await delivery(id)).next_attempt_at;
    }
    assert.deepEqual(await attemptsOf(t.deps.db, id), expected);
    assert.deepEqual([(await delivery(id)).state, (await delivery(id)).attempts], ['delivered', 3]);
  });

  // PostgreSQL appends the new entry to the log's text without parsing it; the log may have been written in another
  // layout (the 0010 migration's json_agg puts spaces and line breaks between entries).
  test('an attempt joins the end of a log written in another layout, and any characters in its error keep the log valid JSON', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/log-layout` });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const id = deliveryIds.get(ch.id)!;
    const earlier = [
      { attempt_no: 1, started_at: 1, finished_at: 2, verdict: 'failed', status_code: 503, error: 'HTTP 503' },
      { attempt_no: 2, started_at: 3, finished_at: 4, verdict: 'failed', status_code: null, error: 'connection refused' },
    ];
    const layout = `[${earlier.map((e) => JSON.stringify(e, null, 1)).join(', \n ')}] \n`;
    await t.deps.db.updateTable('deliveries').set({ attempts: 2, attempt_log: layout }).where('id', '=', id).execute();
    const startedAt = t.clock.now();
    const [job] = await claimJobs(t.deps.db, t.deps.dialect, { owner: 'w1', now: startedAt, leaseUntil: startedAt + 60_000, limit: 1, perChannel: 1, exclude: [], quotas: new Map(), window: 2 });
    const error = 'HTTP 418 "teapot", \\ ] } [ { ✓ \u0001';
    assert.equal(await recordAttempts(t.deps, 'w1', [{ job: job!, verdict: { kind: 'failed', status: 418, error }, startedAt }]), 1);
    const third = { attempt_no: 3, started_at: startedAt, finished_at: t.clock.now(), verdict: 'failed', status_code: 418, error };
    assert.deepEqual(JSON.parse((await delivery(id)).attempt_log), [...earlier, third]);
  });

  test('pending deliveries of a disabled or deleted channel are not sent: the store shows them cancelled', async () => {
    const disabled = await buildChannel(t.deps.db, { url: `${rx.url}/disabled` });
    const deleted = await buildChannel(t.deps.db, { url: `${rx.url}/deleted` });
    const live = await buildChannel(t.deps.db, { url: `${rx.url}/live` });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [disabled.id, deleted.id, live.id], now: t.clock.now() });
    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', disabled.id).execute();
    await t.deps.db.deleteFrom('channels').where('id', '=', deleted.id).execute();
    await worker().drain();
    assert.deepEqual(rx.received.map((r) => r.path), ['/live']);
    const d1 = await delivery(deliveryIds.get(disabled.id)!);
    const d2 = await delivery(deliveryIds.get(deleted.id)!);
    assert.deepEqual([d1.state, d1.last_error, d1.attempts], ['cancelled', 'channel disabled', 0]);
    assert.deepEqual([d2.state, d2.last_error, d2.channel_id], ['cancelled', 'channel deleted', null]);
    // Re-enabling does not replay what was cancelled.
    await t.deps.db.updateTable('channels').set({ enabled: 1 }).where('id', '=', disabled.id).execute();
    await worker().drain();
    assert.equal(rx.received.length, 1);
  });

  test('a channel that never answers holds only its own slots: other channels are delivered meanwhile; stop frees its leases', async () => {
    rx.answer = (r) => (r.path === '/black-hole' ? 'hang' : { status: 200 });
    const hole = await buildChannel(t.deps.db, { url: `${rx.url}/black-hole` });
    const healthy = [];
    for (let i = 0; i < 3; i++) healthy.push(await buildChannel(t.deps.db, { url: `${rx.url}/healthy-${i}` }));
    for (let i = 0; i < 10; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [hole.id, ...healthy.map((h) => h.id)], now: t.clock.now() });
    const w = worker({ concurrency: 4, perChannel: 2, idlePollMs: 5, outbound: { timeoutMs: 120_000 } });
    w.start();
    const delivered = async () => (await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute()).length;
    await until(async () => (await delivered()) === 30);
    assert.equal(rx.inFlight.get('/black-hole'), 2, 'the black hole still holds its two attempts');
    assert.equal(rx.maxInFlight.get('/black-hole'), 2, 'never more than its per-channel share');
    await w.stop(0);
    const holes = await t.deps.db.selectFrom('deliveries').selectAll().where('channel_id', '=', hole.id).execute();
    assert.ok(holes.every((d) => d.state === 'pending' && d.lease_owner === null && d.attempts === 0), 'aborted attempts are freed, not counted');
    assert.equal((await attemptsOf(t.deps.db)).length, 30);
  });

  test('a channel that answers is claimed ahead of its slots by about what it finished lately; one that never answers never is', async () => {
    rx.answer = (r) => (r.path === '/black-hole' ? 'hang' : { status: 200, delayMs: 2 });
    const hole = await buildChannel(t.deps.db, { url: `${rx.url}/black-hole` });
    const fast = await buildChannel(t.deps.db, { url: `${rx.url}/fast` });
    for (let i = 0; i < 100; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [hole.id, fast.id], now: t.clock.now() });
    const w = worker({ concurrency: 4, perChannel: 2, idlePollMs: 5, outbound: { timeoutMs: 120_000 } });
    const leases = async (channelId: string) =>
      (await t.deps.db.selectFrom('deliveries').select('id').where('channel_id', '=', channelId).where('lease_owner', 'is not', null).execute()).length;
    let most = { hole: 0, fast: 0 };
    w.start();
    await until(async () => {
      const [h, f] = [await leases(hole.id), await leases(fast.id)];
      most = { hole: Math.max(most.hole, h), fast: Math.max(most.fast, f) };
      return (await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute()).length === 100;
    });
    assert.equal(most.hole, 2, 'the black hole: its two slots, nothing queued');
    assert.ok(most.fast > 2, `the answering channel was claimed ahead (at most ${most.fast} leases seen)`);
    assert.ok(most.fast <= 2 * 8, 'within AHEAD_FACTOR times its per-channel bound');
    assert.equal(rx.maxInFlight.get('/fast'), 2, 'and still never more than two requests at once');
  });
});

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { afterEach, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { allowTestLoopback, attemptsOf, fixtureResolver, until } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { closedPort, HOOK_TEST_CERT, useReceiver, type Receiver } from '../../../test/helpers/receiver.ts';
import { createDeliveryWorker, type DeliveryWorker, type WorkerOptions } from './delivery.worker.ts';

/** Verifies a signature the way a receiver would, independently of the service's code. */
function verify(secret: string, headers: Record<string, unknown>, body: string): boolean {
  const ts = String(headers['x-svc-timestamp']);
  const expected = `v1=${crypto.createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
  const got = String(headers['x-svc-signature'] ?? '');
  return got.length === expected.length && crypto.timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

forEachDialect((getDb) => {
  let t: TestApp;
  let rx: Receiver;
  let tlsRx: Receiver;
  const receiver = useReceiver();
  const tlsReceiver = useReceiver({ tls: true });
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    rx = receiver();
    tlsRx = tlsReceiver();
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
  const delivery = (id: string) =>
    t.deps.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const attempts = (id: string) => attemptsOf(t.deps.db, id);
  const channel = (id: string) =>
    t.deps.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('POSTs the stored body bytes to every channel, with the timestamp, a verifiable signature only with a secret, and no bearer header', async () => {
    const secret = 'channel-secret-✓-123';
    const signed = await buildChannel(t.deps.db, { url: `${rx.url}/signed?x=1`, secret });
    const plain = await buildChannel(t.deps.db, { url: `${rx.url}/plain` });
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [signed.id, plain.id],
      now: t.clock.now(),
      census: 3,
    });
    const drainStarted = performance.now();
    await worker().drain();
    const drainMs = performance.now() - drainStarted;

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
      assert.deepEqual(
        a.map((x) => [x.attempt_no, x.started_at, x.verdict, x.status_code, x.error, x.response_excerpt]),
        [[1, t.clock.now(), 'delivered', 200, null, 'ok']],
      );
      // The POST's own duration, in whole milliseconds: within the drain that made it (never, say, seconds or a
      // timestamp).
      assert.ok(
        Number.isInteger(a[0]!.duration_ms) && a[0]!.duration_ms <= Math.ceil(drainMs),
        `${a[0]!.duration_ms} ms of a ${drainMs} ms drain`,
      );
    }
    assert.equal((await channel(signed.id)).last_success_at, t.clock.now());
    // The message row is untouched by delivery.
    assert.deepEqual(
      await t.deps.db.selectFrom('messages').selectAll().where('id', '=', message.id).executeTakeFirst(),
      message,
    );
  });

  test('each verdict class: 2xx delivered; 3xx (not followed), 4xx, 5xx, timeout, refused, DNS and TLS failures failed', async () => {
    rx.answer = (r) => {
      if (r.path === '/204') return { status: 204 };
      if (r.path === '/302') return { status: 302, headers: { location: `${rx.url}/followed` } };
      if (r.path === '/404') return { status: 404, body: 'not here' };
      if (r.path === '/503') return { status: 503, body: 'x'.repeat(64 * 1024) };
      if (r.path === '/hang') return 'hang';
      return { status: 200 };
    };
    const refusedPort = await closedPort();
    const cases: [string, 'delivered' | 'failed', number | null, string | null, string | null][] = [
      [`${rx.url}/200`, 'delivered', 200, null, null],
      [`${rx.url}/204`, 'delivered', 204, null, null],
      [`${rx.url}/302`, 'failed', 302, 'redirect 302 not followed', null],
      [`${rx.url}/404`, 'failed', 404, 'HTTP 404', 'not here'],
      [`${rx.url}/503`, 'failed', 503, 'HTTP 503', 'x'.repeat(1024)],
      [`${rx.url}/hang`, 'failed', null, 'timed out after 3 s', null],
      [`http://127.0.0.1:${refusedPort}/`, 'failed', null, 'connection refused', null],
      [`https://no-such-name.test/hook`, 'failed', null, 'DNS lookup failed', null],
      [`https://hook.test:${tlsRx.port}/untrusted`, 'failed', null, 'TLS certificate not trusted', null],
    ];
    const channels = [];
    for (const [url] of cases) channels.push(await buildChannel(t.deps.db, { url }));
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: channels.map((c) => c.id),
      now: t.clock.now(),
    });
    const resolver = fixtureResolver({ 'hook.test': ['127.0.0.1'] });
    await worker({ outbound: { resolver, policy: allowTestLoopback } }).drain();

    for (const [i, [url, verdict, status, error, excerpt]] of cases.entries()) {
      const c = channels[i]!;
      const d = await delivery(deliveryIds.get(c.id)!);
      assert.equal(d.state, verdict === 'delivered' ? 'delivered' : 'pending', url);
      const [a] = await attempts(d.id);
      assert.deepEqual(
        [a!.verdict, a!.status_code, a!.error, a!.response_excerpt],
        [verdict, status, error, excerpt],
        url,
      );
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
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: channels.map((c) => c.id),
      now: t.clock.now(),
    });
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
    assert.deepEqual(
      resolver.calls,
      ['hook.test'],
      'one lookup: the connection used the vetted address, not a second answer',
    );

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
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [ch.id],
      now: t.clock.now(),
    });
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
      assert.ok(
        d.next_attempt_at >= t.clock.now() + gap && d.next_attempt_at <= t.clock.now() + gap * 1.1,
        `gap ${i + 1} within jitter`,
      );
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

    assert.deepEqual(
      (await attempts(id)).map((a) => [a.attempt_no, a.verdict, a.status_code, a.error]),
      [1, 2, 3, 4, 5].map((n) => [n, 'failed', 503, 'HTTP 503']),
    );
    for (const [i, r] of rx.received.entries()) {
      assert.equal(r.body, message.body, 'identical body on every retry');
      assert.equal(r.headers['x-svc-timestamp'], String(Math.floor(times[i]! / 1000)), 'timestamp of that attempt');
      assert.ok(verify('s', r.headers, r.body));
    }
    assert.equal((await channel(ch.id)).consecutive_failures, 5);
    assert.deepEqual(
      await t.deps.db.selectFrom('messages').selectAll().where('id', '=', message.id).executeTakeFirst(),
      message,
    );
    assert.deepEqual(t.logs, []);
  });

  test("a success resets the channel's consecutive failures", async () => {
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

  test('pending deliveries of a disabled or deleted channel are not sent: they are shown cancelled', async () => {
    const disabled = await buildChannel(t.deps.db, { url: `${rx.url}/disabled` });
    const deleted = await buildChannel(t.deps.db, { url: `${rx.url}/deleted` });
    const live = await buildChannel(t.deps.db, { url: `${rx.url}/live` });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [disabled.id, deleted.id, live.id],
      now: t.clock.now(),
    });
    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', disabled.id).execute();
    await t.deps.db.deleteFrom('channels').where('id', '=', deleted.id).execute();
    await worker().drain();
    assert.deepEqual(
      rx.received.map((r) => r.path),
      ['/live'],
    );
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
    for (let i = 0; i < 10; i++)
      await buildMessageWithDeliveries(t.deps.db, {
        channelIds: [hole.id, ...healthy.map((h) => h.id)],
        now: t.clock.now(),
      });
    const w = worker({ concurrency: 4, perChannel: 2, outbound: { timeoutMs: 120_000 } });
    w.start();
    const delivered = async () =>
      (await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'delivered').execute()).length;
    await until(async () => (await delivered()) === 30);
    assert.equal(rx.inFlight.get('/black-hole'), 2, 'the black hole still holds its two attempts');
    assert.equal(rx.maxInFlight.get('/black-hole'), 2, 'never more than its per-channel share');
    assert.ok(healthy.every((_, i) => rx.maxInFlight.get(`/healthy-${i}`)! <= 2));
    await w.stop(0);
    const holes = await t.deps.db.selectFrom('deliveries').selectAll().where('channel_id', '=', hole.id).execute();
    assert.ok(
      holes.every((d) => d.state === 'pending' && d.lease_owner === null && d.attempts === 0),
      'aborted attempts are freed, not counted',
    );
    assert.equal((await attemptsOf(t.deps.db)).length, 30);
  });

  test('drain() delivers everything due, beyond what one claim may take under the slots and per-channel caps', async () => {
    rx.answer = () => ({ status: 200, delayMs: 5 });
    const channels = [
      await buildChannel(t.deps.db, { url: `${rx.url}/d1` }),
      await buildChannel(t.deps.db, { url: `${rx.url}/d2` }),
    ];
    for (let i = 0; i < 6; i++)
      await buildMessageWithDeliveries(t.deps.db, {
        channelIds: channels.map((c) => c.id),
        now: t.clock.now() - 10 + i,
      });
    await worker({ concurrency: 3, perChannel: 1 }).drain();
    assert.equal(rx.received.length, 12);
    const rows = await t.deps.db.selectFrom('deliveries').select(['state', 'attempts', 'lease_owner']).execute();
    assert.ok(rows.every((r) => r.state === 'delivered' && r.attempts === 1 && r.lease_owner === null));
    assert.deepEqual(
      [rx.maxInFlight.get('/d1'), rx.maxInFlight.get('/d2')],
      [1, 1],
      'one request at a time per channel',
    );
  });

  test('wake() starts a due delivery at once instead of at the next poll', async () => {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}/wake` });
    const w = worker({ pollMs: 3_600_000 });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    w.start();
    await until(() => rx.received.length === 1);
    // The loop found nothing more and sleeps for an hour; a new message is due now.
    await until(
      async () =>
        (await t.deps.db.selectFrom('deliveries').select('state').executeTakeFirstOrThrow()).state === 'delivered',
    );
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    w.wake();
    await until(() => rx.received.length === 2, { limitMs: 10_000 });
  });
});

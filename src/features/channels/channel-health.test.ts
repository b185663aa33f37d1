import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { fixtureResolver } from '../../../test/helpers/delivery.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { HOOK_TEST_CERT, closedPort, useReceiver } from '../../../test/helpers/receiver.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../delivery/delivery.worker.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  let w: DeliveryWorker;
  const receiver = useReceiver();
  const tlsReceiver = useReceiver({ tls: true });
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    w = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 2000 } });
  });
  afterEach(async () => {
    await w.stop();
  });

  const channelRow = (id: string) =>
    t.deps.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('failing since the first failure of the streak, kept by later failures, cleared by a success; shown in words', async () => {
    const rx = receiver();
    rx.answer = () => ({ status: 503 });
    const ch = await buildChannel(t, { url: `${rx.url}/hook` });
    const { client } = await signedInAs(t, 'admin');
    const firstFailure = t.clock.now();
    await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [ch.id],
      now: t.clock.now(),
      headline: 'First failing message',
    });
    await w.drain();
    t.clock.advance(45 * 60_000);
    await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [ch.id],
      now: t.clock.now(),
      headline: 'Second failing message',
    });
    await w.drain();
    const failing = await channelRow(ch.id);
    assert.equal(failing.consecutive_failures, 3, 'two attempts of the first message, one of the second');
    assert.equal(failing.failing_since, firstFailure, 'the streak started at the first failure');

    const page = (await client.get('/settings?tab=channels')).text;
    assert.match(page, /<tr class="channel failing">/);
    assert.match(
      page,
      new RegExp(
        `Failing</span> <span class="health-detail">since <time datetime="${new Date(firstFailure).toISOString()}"`,
      ),
    );
    assert.match(page, /3 consecutive failures/);
    assert.match(page, /Last error: HTTP 503/);

    const detail = (await client.get(`/settings/channels/${ch.id}`)).text;
    assert.match(detail, /<dt>Last error<\/dt><dd><span class="last-error">HTTP 503<\/span>/);
    assert.match(detail, /<dt>Last success<\/dt><dd>never<\/dd>/);

    rx.answer = () => ({ status: 200 });
    t.clock.advance(45 * 60_000);
    await w.drain();
    const healthy = await channelRow(ch.id);
    assert.deepEqual(
      [healthy.consecutive_failures, healthy.failing_since, healthy.last_success_at],
      [0, null, t.clock.now()],
    );
    assert.match(
      (await client.get('/settings?tab=channels')).text,
      /<span class="health healthy">Healthy<\/span> <span class="health-detail">last delivery succeeded<\/span>/,
    );

    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', ch.id).execute();
    assert.match((await client.get('/settings?tab=channels')).text, /<span class="health disabled">Disabled<\/span>/);
  });

  test("a channel's page lists its latest attempts newest first, each linked to its message, and its dead letters", async () => {
    const rx = receiver();
    rx.answer = () => ({ status: 500, body: '<b>down</b>' });
    const ch = await buildChannel(t, { url: `${rx.url}/hook` });
    const { client } = await signedInAs(t, 'admin');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { message } = await buildMessageWithDeliveries(t.deps.db, {
        channelIds: [ch.id],
        now: t.clock.now(),
        headline: `Message <${i}>`,
      });
      ids.push(message.id);
      for (let a = 0; a < 5; a++) {
        await w.drain();
        t.clock.advance(45 * 60_000);
      }
    }
    const page = (await client.get(`/settings/channels/${ch.id}`)).text;
    const rows = [
      ...page.matchAll(
        /<tr class="attempt (\w+)"><td><time[^>]*>[^<]*<\/time><\/td><td><a href="\/messages\/([\w-]+)">([^<]*)<\/a>/g,
      ),
    ];
    assert.equal(rows.length, 10, 'a handful: the ten latest of fifteen');
    assert.deepEqual(
      rows.slice(0, 5).map((r) => r[2]),
      Array(5).fill(ids[2]),
      'newest first',
    );
    assert.deepEqual(
      rows.slice(5).map((r) => r[2]),
      Array(5).fill(ids[1]),
    );
    assert.ok(rows.every((r) => r[1] === 'failed'));
    assert.equal(rows[0]![3], 'Message &lt;2&gt;', 'headlines escaped');
    assert.match(page, /Failed: HTTP 500/);
    assert.match(page, /3 dead-lettered deliveries are waiting/);
    assert.match(page, new RegExp(`href="/settings/deliveries/resend-all\\?channel=${ch.id}">Re-send all 3…</a>`));
    assert.ok(!page.includes('<b>down</b>'));
  });

  test('check connection: each step reported on the page, no request sent, nothing stored or logged', async () => {
    const rx = tlsReceiver();
    const ch = await buildChannel(t, { url: `https://hook.test:${rx.port}/hooks/T0KEN` });
    t.deps.outbound = {
      resolver: fixtureResolver({ 'hook.test': ['127.0.0.1'] }),
      policy: (a) => a === '127.0.0.1',
      extraCa: [HOOK_TEST_CERT],
    };
    const { client } = await signedInAs(t, 'admin');
    const logsBefore = t.logs.length;
    const res = await client.post('/settings/channels/check', { id: ch.id });
    assert.equal(res.status, 200);
    assert.match(res.text, /The receiver can be reached\.<\/strong> No request was sent to it\./);
    assert.match(
      res.text,
      /Name resolution<\/span> <span class="step-outcome">OK<\/span><span class="step-detail">hook\.test resolved to 1 address: 127\.0\.0\.1\.<\/span>/,
    );
    assert.match(res.text, /Address policy<\/span> <span class="step-outcome">OK/);
    assert.match(
      res.text,
      new RegExp(
        `TCP connection</span> <span class="step-outcome">OK</span><span class="step-detail">Connected to 127\\.0\\.0\\.1 port ${rx.port} in \\d+ ms\\.`,
      ),
    );
    assert.match(
      res.text,
      /TLS handshake<\/span> <span class="step-outcome">OK<\/span><span class="step-detail">Handshake ok in \d+ ms \(TLSv1\.\d\): certificate for hook\.test, issued by hook\.test, valid until 2126-10-29 01:59 UTC\./,
    );
    assert.equal(rx.connections, 1);
    assert.equal(rx.received.length, 0, 'no HTTP request reached the receiver');
    assert.ok(
      !t.logs.slice(logsBefore).some((l) => l.includes('hook.test') || l.includes('Handshake')),
      'the result is never logged',
    );
    assert.equal((await t.deps.db.selectFrom('messages').select('id').execute()).length, 0, 'nor stored as a message');
    assert.equal(
      (await t.deps.db.selectFrom('delivery_attempts').select('delivery_id').execute()).length,
      0,
      'nor as an attempt',
    );
    assert.equal((await channelRow(ch.id)).consecutive_failures, 0, 'nor counted on the channel');

    t.deps.outbound = { resolver: fixtureResolver({ 'hook.test': ['10.0.0.5'] }) };
    const refused = await client.post('/settings/channels/check', { id: ch.id });
    assert.match(refused.text, /The receiver cannot be reached\./);
    assert.match(
      refused.text,
      /Refused by the address policy: 10\.0\.0\.5 \(private\) is an internal address\. No connection was attempted\./,
    );
    assert.match(refused.text, /TCP connection<\/span> <span class="step-outcome">Skipped/);

    const port = await closedPort();
    const closed = await buildChannel(t, { url: `http://127.0.0.1:${port}/hook` });
    const refusedPort = await client.post('/settings/channels/check', { id: closed.id });
    assert.match(refusedPort.text, new RegExp(`Could not connect to port ${port}: connection refused\\.`));
    assert.equal(rx.connections, 1, 'the refused checks connected nowhere');

    assert.equal(
      (await client.post('/settings/channels/check', { id: 'gone' })).location,
      '/settings?tab=channels&notice=gone',
    );
    assert.equal(
      (await client.post('/settings/channels/check', { id: 'not an id!' })).location,
      '/settings?tab=channels&notice=gone',
    );
    assert.equal((await client.get('/settings/channels/gone')).location, '/settings?tab=channels&notice=gone');
    assert.equal((await client.get('/settings/channels/not%20an%20id')).status, 404);
  });
});

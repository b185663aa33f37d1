import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { attemptsOf, until } from '../../../test/helpers/delivery.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { useReceiver, type Receiver } from '../../../test/helpers/receiver.ts';
import { messageDeliveries } from './deliveries-view.service.ts';
import { MessageDeliveries } from './delivery.views.tsx';
import { createDeliveryWorker, type DeliveryWorker } from './delivery.worker.ts';
import { startDeliveryListener } from './wakeup.listener.ts';

const SECRET_PATH = '/hooks/T0KEN-in-the-path';

forEachDialect((getDb, dialect) => {
  let t: TestApp;
  let rx: Receiver;
  let w: DeliveryWorker;
  const receiver = useReceiver();
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    w = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 2000 } });
    rx = receiver();
    rx.answer = () => ({ status: 503 });
  });
  afterEach(async () => {
    await w.stop();
  });

  /** A message whose delivery to a failing channel has been dead-lettered after its five attempts. */
  async function deadLettered() {
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}${SECRET_PATH}?token=abc`, secret: 'write-only-secret' });
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [ch.id],
      now: t.clock.now(),
      headline: 'Drift on web-1: port 22 opened',
    });
    for (let i = 0; i < 5; i++) {
      await w.drain();
      t.clock.advance(45 * 60_000);
    }
    const id = deliveryIds.get(ch.id)!;
    assert.equal(
      (await t.deps.db.selectFrom('deliveries').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state,
      'dead',
    );
    return { ch, message, id };
  }

  const render = async (messageId: string, isAdmin: boolean, limit?: number) =>
    String(
      await (
        <MessageDeliveries
          deliveries={await messageDeliveries(t.deps, messageId, limit)}
          isAdmin={isAdmin}
          back={`/inbox/${messageId}`}
        />
      ).toString(),
    );

  test('an admin re-sends a dead-lettered delivery: same body and message id, a fresh series of attempts', async () => {
    const { message, id } = await deadLettered();
    const { client } = await signedInAs(t, 'admin');
    const tab = await client.get('/settings?tab=deliveries');
    assert.equal(tab.status, 200);
    assert.match(tab.text, /Drift on web-1: port 22 opened/);
    assert.match(tab.text, /Dead-lettered after 5 attempts; last error: HTTP 503/);
    assert.ok(tab.text.includes(SECRET_PATH), 'admins see the channel URL');
    assert.ok(!tab.text.includes('write-only-secret'), 'never the secret');

    const res = await client.post('/settings/deliveries/resend', { delivery: id });
    assert.equal(res.status, 303);
    const series = await t.deps.db
      .selectFrom('deliveries')
      .selectAll()
      .where('message_id', '=', message.id)
      .orderBy('created_at')
      .execute();
    assert.equal(res.location, `/settings?tab=deliveries&notice=resent&resent=${series[1]?.id}`);
    assert.deepEqual(
      series.map((d) => [d.state, d.attempts]),
      [
        ['dead', 5],
        ['pending', 0],
      ],
    );
    assert.equal(series[1]!.next_attempt_at, t.clock.now());

    rx.answer = () => ({ status: 200 });
    await w.drain();
    assert.equal(rx.received.length, 6);
    assert.ok(
      rx.received.every((r) => r.body === message.body),
      'the very same body bytes, message id included',
    );
    assert.equal(
      (
        await t.deps.db
          .selectFrom('deliveries')
          .select('state')
          .where('id', '=', series[1]!.id)
          .executeTakeFirstOrThrow()
      ).state,
      'delivered',
    );

    const again = await client.post('/settings/deliveries/resend', { delivery: id });
    assert.equal(again.location, '/settings?tab=deliveries&notice=resend-refused&reason=already-resent');
    assert.match(
      (await client.get(again.location!)).text,
      /role="alert">Not re-sent: This delivery has already been re-sent\./,
    );
    const delivered = await client.post('/settings/deliveries/resend', { delivery: series[1]!.id });
    assert.match(
      (await client.get(delivered.location!)).text,
      /Not re-sent: Only a dead-lettered or cancelled delivery can be re-sent/,
    );
    const unknown = await client.post('/settings/deliveries/resend', { delivery: 'no-such-delivery' });
    assert.match((await client.get(unknown.location!)).text, /Not re-sent: That delivery no longer exists\./);
    assert.match(
      (await client.get('/settings?tab=deliveries&state=dead')).text,
      /re-sent: see the later row/,
      'the replaced dead letter stays as history, marked',
    );
    assert.doesNotMatch(
      (await client.get('/settings?tab=deliveries&state=dead')).text,
      /name="delivery"/,
      'and offers no second re-send',
    );
  });

  test('re-send is refused for a disabled or deleted channel, honours only a same-site return path, and is admin-only', async () => {
    const { ch, id } = await deadLettered();
    const { client: viewer } = await signedInAs(t, 'viewer');
    assert.equal((await viewer.get('/settings?tab=deliveries')).status, 403);
    assert.equal((await viewer.post('/settings/deliveries/resend', { delivery: id })).status, 403);

    const { client } = await signedInAs(t, 'admin');
    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', ch.id).execute();
    const disabled = await client.post('/settings/deliveries/resend', { delivery: id });
    assert.equal(disabled.status, 303);
    assert.match((await client.get(disabled.location!)).text, /Not re-sent: Its channel is disabled/);
    await t.deps.db.updateTable('channels').set({ enabled: 1 }).where('id', '=', ch.id).execute();

    assert.match(
      (await client.post('/settings/deliveries/resend', { delivery: id, back: '//evil.example/x' })).location!,
      /^\/settings\?tab=deliveries&notice=resent&resent=/,
    );
    assert.equal(
      (await t.deps.db.selectFrom('deliveries').select('id').execute()).length,
      2,
      'only an admin re-send created a series',
    );

    const second = await deadLetteredAgain(ch.id);
    assert.match(
      (await client.post('/settings/deliveries/resend', { delivery: second, back: '/messages/abc?x=1#deliveries' }))
        .location!,
      /^\/messages\/abc\?x=1&notice=resent&resent=[\w-]+#deliveries$/,
    );

    await t.deps.db.deleteFrom('channels').where('id', '=', ch.id).execute();
    const [latest] = await t.deps.db
      .selectFrom('deliveries')
      .select('id')
      .orderBy('created_at', 'desc')
      .limit(1)
      .execute();
    await t.deps.db.updateTable('deliveries').set({ state: 'dead' }).where('id', '=', latest!.id).execute();
    const gone = await client.post('/settings/deliveries/resend', { delivery: latest!.id });
    assert.match((await client.get(gone.location!)).text, /Not re-sent: Its channel has been deleted/);
    assert.equal((await client.post('/settings/deliveries/resend', {})).status, 400);
  });

  test('a re-send from the message page returns to it saying what happened: the channel queued for (its URL to admins only), or the refusal', async () => {
    const { ch, message, id } = await deadLettered();
    const { client } = await signedInAs(t, 'admin');
    const page = `/messages/${message.id}`;
    assert.match(
      (await client.get(page)).text,
      new RegExp(`<input type="hidden" name="back" value="${page}"/>`),
      'the button returns to its page',
    );
    const res = await client.post('/settings/deliveries/resend', { delivery: id, back: page });
    assert.match(res.location!, new RegExp(`^${page}\\?notice=resent&resent=[\\w-]+$`));
    const after = (await client.get(res.location!)).text;
    assert.match(
      after,
      /<div class="notice success" role="status">Re-sent: a new delivery to <span class="channel">[^<]*\/hooks\/T0KEN-in-the-path\?token=abc<\/span> is queued/,
    );
    assert.ok(after.indexOf('notice success') < after.indexOf('<dl class="facts">'), 'at the top of the page');
    assert.doesNotMatch((await client.get(page)).text, /notice success/, 'only on the page answered after the re-send');

    const again = await client.post('/settings/deliveries/resend', { delivery: id, back: page });
    assert.equal(again.location, `${page}?notice=resend-refused&reason=already-resent`);
    assert.match(
      (await client.get(again.location!)).text,
      /<div class="notice error" role="alert">Not re-sent: This delivery has already been re-sent\.<\/div>/,
    );

    // A viewer handed the same address reads the opaque label, never the URL; an unknown reason shows nothing.
    const { client: viewer } = await signedInAs(t, 'viewer');
    const seen = (await viewer.get(res.location!)).text;
    assert.match(
      seen,
      new RegExp(`Re-sent: a new delivery to <span class="channel">channel ${ch.id.slice(0, 6)}</span> is queued`),
    );
    assert.ok(!seen.includes(SECRET_PATH), 'no channel URL for a viewer');
    assert.doesNotMatch((await client.get(`${page}?notice=resend-refused&reason=toString`)).text, /notice error/);
    assert.match((await client.get(`${page}?notice=resent&resent=%3Cb%3E`)).text, /Re-sent: a new delivery is queued/);
  });

  test('a re-send from the Deliveries tab returns to the same filtered page with the notice', async () => {
    const { ch, id } = await deadLettered();
    const { client } = await signedInAs(t, 'admin');
    const tab = `/settings?tab=deliveries&state=dead&channel=${ch.id}`;
    assert.match(
      (await client.get(tab)).text,
      new RegExp(`name="back" value="/settings\\?tab=deliveries&amp;state=dead&amp;channel=${ch.id}"`),
    );
    const res = await client.post('/settings/deliveries/resend', {
      delivery: id,
      back: `/settings?tab=deliveries&state=dead&channel=${ch.id}`,
    });
    assert.match(
      res.location!,
      new RegExp(`^/settings\\?tab=deliveries&state=dead&channel=${ch.id}&notice=resent&resent=[\\w-]+$`),
    );
    assert.match(
      (await client.get(res.location!)).text,
      /Re-sent: a new delivery to <span class="channel">[^<]*T0KEN-in-the-path[^<]*<\/span> is queued/,
    );
  });

  /** Dead-letters a fresh message to an existing channel; returns its delivery id. */
  async function deadLetteredAgain(channelId: string) {
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [channelId],
      now: t.clock.now(),
    });
    rx.answer = () => ({ status: 503 });
    for (let i = 0; i < 5; i++) {
      await w.drain();
      t.clock.advance(45 * 60_000);
    }
    return deliveryIds.get(channelId)!;
  }

  test('a message shows, per channel, delivered (when), pending (attempts so far, next attempt) or dead-lettered, with each attempt', async () => {
    const { message, id } = await deadLettered();
    const pendingCh = await buildChannel(t.deps.db, { url: `${rx.url}/second` });
    await t.deps.db
      .insertInto('deliveries')
      .values({
        id: 'pending-one',
        message_id: message.id,
        channel_id: pendingCh.id,
        state: 'pending',
        attempts: 0,
        next_attempt_at: t.clock.now(),
        lease_owner: null,
        lease_until: null,
        delivered_at: null,
        last_error: null,
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
      })
      .execute();
    await w.drain(); // first attempt to the second channel fails with 503

    const before = await render(message.id, true);
    assert.match(before, /Dead-lettered after 5 attempts; last error: HTTP 503/);
    assert.equal(before.match(/failed: HTTP 503/g)?.length, 6, 'five attempts on the first channel, one on the second');
    assert.match(before, /Pending: 1 of 5 attempts made; next attempt <time/);
    assert.match(before, new RegExp(`name="delivery" value="${id}"`), 'admins get a re-send button on the dead letter');
    assert.ok(
      before.includes(SECRET_PATH) && !before.includes('write-only-secret'),
      'admins see the URL, never the secret',
    );
    assert.match(before, /0 delivered, 1 pending, 1 dead-lettered\./);
    const capped = await render(message.id, true, 1);
    assert.match(capped, /Showing 1 of 2, undelivered first\./);
    assert.match(capped, /Dead-lettered after 5/, 'the dead letter comes first');

    await resendAndDeliver(id);
    const afterResend = await render(message.id, false);
    assert.match(afterResend, /re-sent: see the later row/);
    assert.match(afterResend, /Delivered <time/);
    assert.match(afterResend, /delivered \(HTTP 200\)/);
    assert.ok(!afterResend.includes('name="delivery"'), 'no re-send button for viewers');
    assert.ok(
      !afterResend.includes('127.0.0.1') && !afterResend.includes(SECRET_PATH),
      'viewers never see a channel URL, not even its host',
    );
    assert.match(afterResend, /<span class="channel">channel [\w-]{6}<\/span>/);
    assert.match(afterResend, /: failed<\/li>/);
    assert.doesNotMatch(afterResend, /HTTP 503/, 'error texts are for administrators');

    await t.deps.db.deleteFrom('channels').where('id', '=', pendingCh.id).execute();
    await w.drain();
    assert.match(await render(message.id, false), /a deleted channel<\/span>.*Not sent: channel deleted/s);
    // A row cancelled by an older version may still carry its last attempt's error: administrators only.
    await t.deps.db
      .updateTable('deliveries')
      .set({ last_error: 'HTTP 503' })
      .where('state', '=', 'cancelled')
      .where('message_id', '=', message.id)
      .execute();
    assert.match(await render(message.id, false), /Not sent: cancelled/);
    assert.doesNotMatch(await render(message.id, false), /HTTP 503/);
    assert.match(await render(message.id, true), /Not sent: HTTP 503/);
  });

  async function resendAndDeliver(id: string) {
    const { client } = await signedInAs(t, 'admin');
    assert.equal((await client.post('/settings/deliveries/resend', { delivery: id })).status, 303);
    rx.answer = () => ({ status: 200 });
    await w.drain();
  }
  test("an admin sees each attempt's duration, error and the start of the receiver's answer, escaped; a viewer none of it", async () => {
    const hostile = '<script>alert(1)</script><b onclick="x()">bold</b> & more';
    const long = 'y'.repeat(3000);
    let n = 0;
    rx.answer = () => (++n === 1 ? { status: 503, body: hostile } : { status: 200, body: long });
    const ch = await buildChannel(t.deps.db, { url: `${rx.url}${SECRET_PATH}` });
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [ch.id],
      now: t.clock.now(),
    });
    await w.drain();
    t.clock.advance(45 * 60_000);
    await w.drain();
    const rows = await attemptsOf(t.deps.db, deliveryIds.get(ch.id)!);
    assert.deepEqual(
      rows.map((a) => [a.attempt_no, a.verdict, a.status_code, a.error]),
      [
        [1, 'failed', 503, 'HTTP 503'],
        [2, 'delivered', 200, null],
      ],
    );
    assert.equal(rows[0]!.response_excerpt, hostile);
    assert.ok(Buffer.byteLength(rows[1]!.response_excerpt!) <= 1024, 'an excerpt is at most 1 KiB');

    const admin = (await signedInAs(t, 'admin')).client;
    const asAdmin = await admin.get(`/messages/${message.id}`);
    assert.equal(asAdmin.status, 200);
    assert.ok(
      !asAdmin.text.includes('<script>alert(1)') && !asAdmin.text.includes('<b onclick'),
      'never markup from the receiver',
    );
    assert.ok(
      asAdmin.text.includes(
        `<pre class="excerpt" tabindex="0" aria-label="Receiver's answer to attempt 1">&lt;script&gt;alert(1)&lt;/script&gt;&lt;b onclick=&quot;x()&quot;&gt;bold&lt;/b&gt; &amp; more</pre>`.replace(
          "'",
          '&#39;',
        ),
      ),
      'the answer, escaped, in a scroll box the keyboard can reach',
    );
    assert.match(asAdmin.text, /failed: HTTP 503<span class="duration"> in \d+ ms<\/span>/);
    assert.match(
      asAdmin.text,
      /delivered \(HTTP 200\)<span class="duration"> in \d+ ms<\/span><pre class="excerpt"[^>]*>y{1000,1024}<\/pre>/,
    );
    assert.match(asAdmin.text, /<tr class="delivery state-delivered">/, 'the row carries its state for the stylesheet');

    const viewer = (await signedInAs(t, 'viewer')).client;
    const asViewer = await viewer.get(`/messages/${message.id}`);
    assert.equal(asViewer.status, 200);
    assert.match(asViewer.text, /: failed<\/li>/);
    assert.match(asViewer.text, /: delivered \(HTTP 200\)<\/li>/);
    for (const hidden of ['alert(1)', 'excerpt', 'yyyy', 'HTTP 503', ' ms<', SECRET_PATH, '127.0.0.1'])
      assert.ok(!asViewer.text.includes(hidden), hidden);
  });
  test("a re-send wakes this process's workers after its commit and, on PostgreSQL, every listening process; a refused one wakes nobody", async () => {
    const { id } = await deadLettered();
    const database = getDb().database;
    // What a woken worker on another connection sees pending: SQLite reads synchronously inside the wake-up.
    const file = database.kind === 'sqlite' ? new SQLite(database.path, { readonly: true }) : undefined;
    const other = database.kind === 'postgres' ? new pg.Client({ connectionString: database.url }) : undefined;
    await other?.connect();
    const pendingSeen: (number | Promise<number>)[] = [];
    const pending = (): number | Promise<number> =>
      file
        ? file.prepare<[], { n: number }>("select count(*) as n from deliveries where state = 'pending'").get()!.n
        : other!
            .query<{ n: string }>("select count(*) as n from deliveries where state = 'pending'")
            .then((r) => Number(r.rows[0]!.n));
    const unsubscribe = t.deps.wakeup.subscribe(() => pendingSeen.push(pending()));
    const notes: (string | undefined)[] = [];
    const listener =
      dialect === 'postgres' && database.kind === 'postgres'
        ? startDeliveryListener({ url: database.url, log: t.deps.log, onNotify: (p) => notes.push(p) })
        : undefined;
    try {
      if (listener) await until(() => notes.length > 0); // connected: the catch-up call, without a payload
      const { client } = await signedInAs(t, 'admin');
      assert.equal((await client.post('/settings/deliveries/resend', { delivery: id })).status, 303);
      assert.equal(pendingSeen.length, 1);
      assert.equal(await pendingSeen[0], 1, 'woken after the commit: the new series is there to claim');
      if (listener) await until(() => notes.some((p) => p !== undefined));
      assert.match(
        (await client.post('/settings/deliveries/resend', { delivery: id })).location!,
        /notice=resend-refused&reason=already-resent/,
      );
      assert.equal(pendingSeen.length, 1, 'a refusal wakes nobody');
    } finally {
      unsubscribe();
      file?.close();
      await other?.end();
      await listener?.close();
    }
  });
});

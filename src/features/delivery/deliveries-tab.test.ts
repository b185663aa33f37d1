import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import type { DeliveriesTable } from '../../db/schema.ts';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { useReceiver } from '../../../test/helpers/receiver.ts';
import { createDeliveryWorker, type DeliveryWorker } from './delivery.worker.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  let w: DeliveryWorker;
  const receiver = useReceiver();
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
    w = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 2000 } });
  });
  afterEach(async () => {
    await w.stop();
  });

  /**
   * A message to `channelId` whose one delivery is put in `state` (as the worker would leave it), one minute after the
   * last.
   */
  async function delivery(channelId: string, state: DeliveriesTable['state'], headline: string) {
    t.clock.advance(60_000);
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [channelId],
      now: t.clock.now(),
      headline,
    });
    const id = deliveryIds.get(channelId)!;
    const finished =
      state === 'pending'
        ? {}
        : {
            attempts: state === 'dead' ? 5 : 1,
            last_error: state === 'cancelled' ? 'channel disabled' : state === 'dead' ? 'HTTP 503' : null,
          };
    await t.deps.db
      .updateTable('deliveries')
      .set({ state, ...finished, delivered_at: state === 'delivered' ? t.clock.now() : null })
      .where('id', '=', id)
      .execute();
    return { id, messageId: message.id };
  }

  const rowsOf = (html: string) =>
    [...html.matchAll(/<tr class="delivery state-(\w+)"><td><a href="\/messages\/([\w-]+)">([^<]*)<\/a>/g)].map(
      (m) => ({ state: m[1], message: m[2], headline: m[3] }),
    );

  test('filter by state and channel (links and a GET form), rows linked to their message and classed by state, paging keeps the filters', async () => {
    const a = await buildChannel(t, { url: 'https://a.example.com/hook' });
    const b = await buildChannel(t, { url: `https://b.example.com/${'long-path-'.repeat(30)}` });
    const made = [
      await delivery(a.id, 'delivered', 'A delivered'),
      await delivery(a.id, 'dead', 'A dead <1>'),
      await delivery(b.id, 'pending', 'B pending'),
      await delivery(b.id, 'cancelled', 'B cancelled'),
      await delivery(b.id, 'dead', 'B dead'),
    ];
    const { client } = await signedInAs(t, 'admin');
    const all = (await client.get('/settings?tab=deliveries')).text;
    assert.deepEqual(
      rowsOf(all).map((r) => r.headline),
      ['B dead', 'B cancelled', 'B pending', 'A dead &lt;1&gt;', 'A delivered'],
      'most recent first, escaped',
    );
    assert.deepEqual(
      rowsOf(all).map((r) => r.message),
      made.map((m) => m.messageId).reverse(),
    );
    assert.deepEqual(
      rowsOf(all).map((r) => r.state),
      ['dead', 'cancelled', 'pending', 'dead', 'delivered'],
    );
    assert.match(
      all,
      /<span class="state dead">Dead-lettered after 5 attempts; last error: HTTP 503/,
      'the state in words too',
    );
    assert.match(all, /<span class="state cancelled">Not sent: channel disabled/);
    assert.match(all, /<span class="state pending">Pending: 0 of 5 attempts made/);
    assert.match(all, /<span class="state delivered">Delivered <time/);
    assert.match(all, /<a href="\/settings\?tab=deliveries&amp;state=dead">Dead-lettered<\/a>/, 'state filter links');
    assert.match(all, /<a href="\/settings\?tab=deliveries" aria-current="page">All states<\/a>/);
    assert.match(all, /<form method="get" action="\/settings" class="filter-form">/);
    assert.match(
      all,
      /<label for="[^"]+">Channel<\/label><select id="[^"]+" name="channel"/,
      'a labelled channel filter',
    );

    const dead = (await client.get('/settings?tab=deliveries&state=dead')).text;
    assert.deepEqual(
      rowsOf(dead).map((r) => r.headline),
      ['B dead', 'A dead &lt;1&gt;'],
    );
    assert.match(dead, /aria-current="page">Dead-lettered</);
    assert.match(dead, /<input type="hidden" name="state" value="dead"\/>/, 'the channel form keeps the state');
    const deadOfA = (await client.get(`/settings?tab=deliveries&state=dead&channel=${a.id}`)).text;
    assert.deepEqual(
      rowsOf(deadOfA).map((r) => r.headline),
      ['A dead &lt;1&gt;'],
    );
    assert.match(deadOfA, new RegExp(`<option value="${a.id}" selected="">https://a.example.com/hook</option>`));
    assert.match(
      deadOfA,
      new RegExp(`href="/settings\\?tab=deliveries&amp;state=pending&amp;channel=${a.id}"`),
      'state links keep the channel',
    );
    assert.deepEqual(
      rowsOf((await client.get(`/settings?tab=deliveries&channel=${b.id}&state=pending`)).text).map((r) => r.headline),
      ['B pending'],
    );
    assert.match(
      (await client.get('/settings?tab=deliveries&state=delivered&channel=nothing-here')).text,
      /No delivery matches these filters\./,
    );
    for (const odd of ['state=weird', 'channel=%3Cscript%3E', 'page=-1', 'page=1e9']) {
      assert.equal(rowsOf((await client.get(`/settings?tab=deliveries&${odd}`)).text).length, 5, odd);
    }

    for (let i = 0; i < 55; i++) await delivery(a.id, 'dead', `A dead extra ${i}`);
    const first = (await client.get(`/settings?tab=deliveries&state=dead&channel=${a.id}`)).text;
    assert.equal(rowsOf(first).length, 50);
    assert.match(
      first,
      new RegExp(
        `<a href="/settings\\?tab=deliveries&amp;state=dead&amp;channel=${a.id}&amp;page=2">Older deliveries</a>`,
      ),
    );
    const second = (await client.get(`/settings?tab=deliveries&state=dead&channel=${a.id}&page=2`)).text;
    assert.deepEqual(
      rowsOf(second).map((r) => r.headline),
      ['A dead extra 4', 'A dead extra 3', 'A dead extra 2', 'A dead extra 1', 'A dead extra 0', 'A dead &lt;1&gt;'],
    );
    assert.match(
      second,
      new RegExp(`<a href="/settings\\?tab=deliveries&amp;state=dead&amp;channel=${a.id}">Newer deliveries</a>`),
    );
  });

  test('re-send all dead letters of a channel: the count in the confirmation, one transaction, the count re-queued, the same body', async () => {
    const rx = receiver();
    const ch = await buildChannel(t, { url: `${rx.url}/hooks/fixed-now` });
    const other = await buildChannel(t, { url: 'https://other.example.com/' });
    const dead = [
      await delivery(ch.id, 'dead', 'one'),
      await delivery(ch.id, 'dead', 'two'),
      await delivery(ch.id, 'dead', 'three'),
    ];
    await delivery(ch.id, 'cancelled', 'cancelled stays');
    await delivery(ch.id, 'delivered', 'delivered stays');
    await delivery(other.id, 'dead', 'other channel');
    const { client } = await signedInAs(t, 'admin');

    const list = (await client.get(`/settings?tab=deliveries&channel=${ch.id}`)).text;
    assert.match(
      list,
      /3 dead-lettered deliveries to <code>http:\/\/127\.0\.0\.1:\d+\/hooks\/fixed-now<\/code> are waiting\./,
    );
    const confirm = await client.get(`/settings/deliveries/resend-all?channel=${ch.id}`);
    assert.equal(confirm.status, 200);
    assert.match(
      confirm.text,
      /Re-send 3 dead-lettered deliveries to <code>http:\/\/127\.0\.0\.1:\d+\/hooks\/fixed-now<\/code>\?/,
    );
    assert.match(confirm.text, /<button type="submit">Re-send 3 deliveries<\/button>/);
    assert.equal((await t.deps.db.selectFrom('deliveries').select('id').execute()).length, 6, 'asking changes nothing');

    const res = await client.post('/settings/deliveries/resend-all', { channel: ch.id });
    assert.equal(res.status, 303);
    assert.equal(res.location, `/settings?tab=deliveries&channel=${ch.id}&notice=resent-all&count=3`);
    assert.match((await client.get(res.location!)).text, /Re-sent 3 dead-lettered deliveries: pending again/);
    const fresh = await t.deps.db.selectFrom('deliveries').selectAll().where('state', '=', 'pending').execute();
    assert.deepEqual(fresh.map((d) => d.message_id).sort(), dead.map((d) => d.messageId).sort());
    assert.ok(fresh.every((d) => d.channel_id === ch.id && d.attempts === 0 && d.next_attempt_at === t.clock.now()));

    await w.drain();
    const bodies = await t.deps.db.selectFrom('messages').select(['id', 'body']).execute();
    assert.equal(rx.received.length, 3);
    for (const r of rx.received)
      assert.ok(
        bodies.some((m) => m.body === r.body),
        'each re-send posts the stored body byte for byte',
      );

    const again = await client.post('/settings/deliveries/resend-all', { channel: ch.id });
    assert.equal(again.location, `/settings?tab=deliveries&channel=${ch.id}&notice=resent-all&count=0`);
    assert.match((await client.get(again.location!)).text, /Nothing was re-sent/);
    assert.match((await client.get(`/settings/deliveries/resend-all?channel=${ch.id}`)).text, /Nothing to re-send/);
  });

  test('re-sent twice at once, each dead letter is re-queued once; a disabled or deleted channel is refused; admins only', async () => {
    const ch = await buildChannel(t, { url: 'https://hooks.example.com/race' });
    const dead = [];
    for (let i = 0; i < 20; i++) dead.push(await delivery(ch.id, 'dead', `dead ${i}`));
    const { client } = await signedInAs(t, 'admin');
    const { client: other } = await signedInAs(t, 'admin');
    const results = await Promise.all([
      client.post('/settings/deliveries/resend-all', { channel: ch.id }),
      other.post('/settings/deliveries/resend-all', { channel: ch.id }),
      client.post('/settings/deliveries/resend', { delivery: dead[7]!.id }),
    ]);
    const counts = results.slice(0, 2).map((r) => Number(new URL(r.location!, 'http://x').searchParams.get('count')));
    const single = /notice=resent&/.test(results[2]!.location ?? '') ? 1 : 0;
    assert.equal(counts[0]! + counts[1]! + single, 20, `re-queued once in all (${counts}, ${single})`);
    const pending = await t.deps.db
      .selectFrom('deliveries')
      .select('message_id')
      .where('state', '=', 'pending')
      .execute();
    assert.equal(pending.length, 20);
    assert.equal(new Set(pending.map((p) => p.message_id)).size, 20, 'no message twice');

    const { client: viewer } = await signedInAs(t, 'viewer');
    assert.equal((await viewer.get(`/settings/deliveries/resend-all?channel=${ch.id}`)).status, 403);
    assert.equal((await viewer.post('/settings/deliveries/resend-all', { channel: ch.id })).status, 403);

    const off = await buildChannel(t, { url: 'https://hooks.example.com/off' });
    await delivery(off.id, 'dead', 'dead on a disabled channel');
    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', off.id).execute();
    assert.match(
      (await client.get(`/settings/deliveries/resend-all?channel=${off.id}`)).text,
      /is disabled\. Enable it first/,
    );
    const refused = await client.post('/settings/deliveries/resend-all', { channel: off.id });
    assert.equal(refused.status, 409);
    assert.match(refused.text, /channel is disabled/);
    assert.equal(
      (await client.get('/settings/deliveries/resend-all?channel=gone')).location,
      '/settings?tab=deliveries&notice=gone',
    );
    assert.equal(
      (await client.post('/settings/deliveries/resend-all', { channel: 'gone' })).location,
      '/settings?tab=deliveries&notice=gone',
    );
    assert.equal(
      (await client.post('/settings/deliveries/resend-all', {})).location,
      '/settings?tab=deliveries&notice=gone',
    );
    assert.equal(
      (await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'pending').execute()).length,
      20,
    );
  });
});

// The deliveries API: the console's Deliveries tab as data and its re-sends, over a token; every answer is
// checked against the OpenAPI document.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { DeliveriesTable } from '../../db/schema.ts';
import { type ApiClient, assertProblem, buildApiUser } from '../../../test/helpers/api.ts';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { deliveriesPage } from './deliveries-view.service.ts';
import type { DeliveryFilter } from './deliveries.repo.ts';

const SECRET = 'whsec-Deliveries-S3cret';

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof buildApiUser>>;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
    admin = await buildApiUser(t, 'admin');
  });

  /**
   * A message to each of `channelIds`, its deliveries put in `state` as the worker would leave them. The clock moves
   * one minute first unless `tie` (then it shares its time, and its sort key, with the previous one).
   */
  async function deliveries(
    channelIds: string[],
    state: DeliveriesTable['state'],
    headline: string,
    opts: { tie?: boolean } = {},
  ) {
    if (!opts.tie) t.clock.advance(60_000);
    const { message, deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds,
      now: t.clock.now(),
      headline,
    });
    const ids = [...deliveryIds.values()];
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
      .where('id', 'in', ids)
      .execute();
    return { ids, messageId: message.id };
  }
  const one = async (channelId: string, state: DeliveriesTable['state'], headline: string) =>
    (await deliveries([channelId], state, headline)).ids[0]!;
  const stateOf = async (id: string) =>
    (await t.deps.db.selectFrom('deliveries').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;

  /** Every page of a list at `limit` per page: the ids per page. */
  async function pages(api: ApiClient, query: string, limit: number): Promise<string[][]> {
    const out: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await api.get(
        `/api/deliveries?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.equal(res.status, 200, res.text);
      out.push(res.body.items.map((d: any) => d.id));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    return out;
  }

  test('the list: each delivery with its message, channel and state, filtered by state and channel, in the console’s order', async () => {
    const a = await buildChannel(t, { url: 'https://a.example.com/hook', secret: SECRET, createdBy: admin.account.id });
    const b = await buildChannel(t, { url: 'https://b.example.com/hook', createdBy: admin.account.id });
    const delivered = await one(a.id, 'delivered', 'A delivered');
    const deadA = await one(a.id, 'dead', 'A dead <1>');
    const pendingB = await one(b.id, 'pending', 'B pending');
    await one(b.id, 'cancelled', 'B cancelled');
    await one(b.id, 'dead', 'B dead');

    const all = await admin.api.get('/api/deliveries');
    assert.equal(all.status, 200);
    assert.ok(!all.text.includes(SECRET), 'no channel secret');
    assert.deepEqual(
      all.body.items.map((d: any) => d.message.headline),
      ['B dead', 'B cancelled', 'B pending', 'A dead <1>', 'A delivered'],
      'newest message first',
    );
    assert.equal(all.body.next_cursor, null);
    const first = all.body.items.find((d: any) => d.id === deadA);
    const row = await t.deps.db.selectFrom('deliveries').selectAll().where('id', '=', deadA).executeTakeFirstOrThrow();
    assert.deepEqual(first, {
      id: deadA,
      message: { id: row.message_id, headline: 'A dead <1>', class: 'drift' },
      channel: { id: a.id, url: 'https://a.example.com/hook' },
      state: 'dead',
      attempts: 5,
      max_attempts: 5,
      last_error: 'HTTP 503',
      next_attempt_at: null,
      delivered_at: null,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
      superseded: false,
      resendable: true,
    });
    const pending = all.body.items.find((d: any) => d.id === pendingB);
    assert.deepEqual(
      [pending.next_attempt_at, pending.resendable],
      [new Date(pending.created_at).toISOString(), false],
    );
    assert.ok(all.body.items.find((d: any) => d.id === delivered).delivered_at);

    const headlines = async (query: string) =>
      (await admin.api.get(`/api/deliveries?${query}`)).body.items.map((d: any) => d.message.headline);
    assert.deepEqual(await headlines('state=dead'), ['B dead', 'A dead <1>']);
    assert.deepEqual(await headlines(`state=dead&channel=${a.id}`), ['A dead <1>']);
    assert.deepEqual(await headlines(`channel=${b.id}&state=pending`), ['B pending']);
    assert.deepEqual(await headlines('state=delivered&channel=nothing-here'), []);

    for (const [query, field] of [
      ['state=weird', 'state'],
      ['channel=%3Cscript%3E', 'channel'],
      ['limit=0', 'limit'],
    ]) {
      const res = await admin.api.get(`/api/deliveries?${query}`);
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['query', field]],
      );
    }
  });

  test('paging: every order (message, changed, due) pages by cursor without gap or repeat, ties broken as the console breaks them', async () => {
    const a = await buildChannel(t, { url: 'https://a.example.com/', createdBy: admin.account.id });
    const b = await buildChannel(t, { url: 'https://b.example.com/', createdBy: admin.account.id });
    for (let i = 0; i < 3; i++) {
      await deliveries([a.id, b.id], 'dead', `dead ${i}`);
      await deliveries([a.id, b.id], 'dead', `dead ${i} tie`, { tie: true });
      await deliveries([a.id], 'pending', `pending ${i}`, { tie: true });
      await deliveries([b.id], 'pending', `pending ${i} tie`, { tie: true });
      await deliveries([a.id, b.id], 'delivered', `delivered ${i}`);
    }
    const cases: [string, DeliveryFilter, number][] = [
      ['', {}, 10],
      ['&state=dead', { state: 'dead' }, 5],
      ['&state=pending', { state: 'pending' }, 2],
      [`&state=dead&channel=${a.id}`, { state: 'dead', channelId: a.id }, 2],
    ];
    for (const [query, filter, limit] of cases) {
      const paged = await pages(admin.api, query, limit);
      const console = (await deliveriesPage(t.deps, filter, 1)).rows.map((r) => r.id);
      assert.equal(paged.length, 3, `${query}: three pages`);
      assert.deepEqual(paged.flat(), console, `${query}: the console's rows in the console's order`);
      assert.equal(new Set(paged.flat()).size, paged.flat().length, `${query}: no repeats`);
    }

    // A cursor names a position in one order: another filter's, or one made up, is refused.
    const dead = await admin.api.get('/api/deliveries?state=dead&limit=1');
    const pending = await admin.api.get('/api/deliveries?state=pending&limit=1');
    const all = await admin.api.get('/api/deliveries?limit=1');
    const made = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const [query, cursor] of [
      ['state=pending', dead.body.next_cursor],
      ['state=dead', pending.body.next_cursor],
      ['state=delivered', dead.body.next_cursor],
      ['state=dead', all.body.next_cursor],
      ['', made(['message', 1, 'x'])],
      ['', made(['message', '1', 'x', 'y'])],
      ['', 'not base64 json!'],
    ]) {
      const res = await admin.api.get(`/api/deliveries?${query}&cursor=${encodeURIComponent(cursor)}`);
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['query', 'cursor']],
        `${query} ${cursor}`,
      );
    }
    assert.equal(
      (await admin.api.get(`/api/deliveries?state=cancelled&cursor=${encodeURIComponent(dead.body.next_cursor)}`))
        .status,
      200,
      'dead and cancelled share an order',
    );
  });

  test('one delivery with every attempt; 404 for an unknown or malformed id', async () => {
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const id = await one(ch.id, 'dead', 'dead');
    const start = t.clock.now();
    for (const n of [1, 2]) {
      await t.deps.db
        .insertInto('delivery_attempts')
        .values({
          delivery_id: id,
          attempt_no: n,
          started_at: start + n,
          duration_ms: 12,
          verdict: 'failed',
          status_code: n === 1 ? null : 503,
          error: n === 1 ? 'connection refused' : 'HTTP 503',
          response_excerpt: n === 1 ? null : '<b>down</b>',
        })
        .execute();
    }
    const res = await admin.api.get(`/api/deliveries/${id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.state, 'dead');
    assert.deepEqual(res.body.attempt_log, [
      {
        attempt_no: 1,
        started_at: new Date(start + 1).toISOString(),
        duration_ms: 12,
        verdict: 'failed',
        status_code: null,
        error: 'connection refused',
        response_excerpt: null,
      },
      {
        attempt_no: 2,
        started_at: new Date(start + 2).toISOString(),
        duration_ms: 12,
        verdict: 'failed',
        status_code: 503,
        error: 'HTTP 503',
        response_excerpt: '<b>down</b>',
      },
    ]);
    assertProblem(await admin.api.get('/api/deliveries/nothing-here'), 404, 'not-found');
    assertProblem(await admin.api.get('/api/deliveries/not%20an%20id'), 404, 'not-found');
  });

  test('re-send one: 201 with the new delivery and its Location; each refusal its own type; a refusal changes nothing', async () => {
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const dead = await one(ch.id, 'dead', 'dead');
    t.clock.advance(1000);
    const res = await admin.api.post(`/api/deliveries/${dead}/resend`);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('location'), `/api/deliveries/${res.body.id}`);
    assert.notEqual(res.body.id, dead);
    assert.deepEqual(
      [res.body.state, res.body.attempts, res.body.channel.id, res.body.next_attempt_at, res.body.attempt_log],
      ['pending', 0, ch.id, new Date(t.clock.now()).toISOString(), []],
    );
    assert.equal((await admin.api.get(res.headers.get('location')!)).body.id, res.body.id);
    const old = (await admin.api.get(`/api/deliveries/${dead}`)).body;
    assert.deepEqual(
      [old.state, old.superseded, old.resendable],
      ['dead', true, false],
      'the old one stays as history',
    );
    assertProblem(await admin.api.post(`/api/deliveries/${dead}/resend`), 409, 'already-resent');

    assertProblem(
      await admin.api.post(`/api/deliveries/${await one(ch.id, 'pending', 'pending')}/resend`),
      409,
      'not-undelivered',
    );
    assertProblem(
      await admin.api.post(`/api/deliveries/${await one(ch.id, 'delivered', 'delivered')}/resend`),
      409,
      'not-undelivered',
    );
    const cancelled = await one(ch.id, 'cancelled', 'cancelled');
    assert.equal(
      (await admin.api.post(`/api/deliveries/${cancelled}/resend`)).status,
      201,
      'a cancelled one may be re-sent',
    );

    const off = await buildChannel(t, { createdBy: admin.account.id });
    const deadOff = await one(off.id, 'dead', 'dead on a channel to disable');
    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', off.id).execute();
    assertProblem(await admin.api.post(`/api/deliveries/${deadOff}/resend`), 409, 'channel-disabled');

    const gone = await buildChannel(t, { createdBy: admin.account.id });
    const deadGone = await one(gone.id, 'dead', 'dead on a channel to delete');
    assert.equal((await admin.api.delete(`/api/channels/${gone.id}`)).status, 204);
    assert.equal((await admin.api.get(`/api/deliveries/${deadGone}`)).body.channel, null, 'a deleted channel is null');
    assertProblem(await admin.api.post(`/api/deliveries/${deadGone}/resend`), 409, 'channel-deleted');

    assertProblem(await admin.api.post('/api/deliveries/nothing-here/resend'), 404, 'not-found');
    assertProblem(await admin.api.post('/api/deliveries/not%20an%20id/resend'), 404, 'not-found');
    const pendingNow = await t.deps.db.selectFrom('deliveries').select('id').where('state', '=', 'pending').execute();
    assert.equal(pendingNow.length, 3, 'the two re-sends and the pending one; nothing from the refusals');
  });

  test('re-send every dead letter of a channel: the count, cancelled ones left alone, then nothing; disabled 409, unknown 404', async () => {
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const other = await buildChannel(t, { createdBy: admin.account.id });
    const dead = [await one(ch.id, 'dead', 'one'), await one(ch.id, 'dead', 'two'), await one(ch.id, 'dead', 'three')];
    const cancelled = await one(ch.id, 'cancelled', 'cancelled stays');
    const otherDead = await one(other.id, 'dead', 'other channel');
    const res = await admin.api.post(`/api/channels/${ch.id}/resend-dead`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { count: 3 });
    const fresh = await t.deps.db
      .selectFrom('deliveries')
      .select(['channel_id', 'attempts'])
      .where('state', '=', 'pending')
      .execute();
    assert.deepEqual(fresh, Array(3).fill({ channel_id: ch.id, attempts: 0 }));
    assert.deepEqual([await stateOf(cancelled), await stateOf(otherDead)], ['cancelled', 'dead']);
    for (const id of dead) assert.equal((await admin.api.get(`/api/deliveries/${id}`)).body.superseded, true);
    assert.deepEqual(
      (await admin.api.post(`/api/channels/${ch.id}/resend-dead`)).body,
      { count: 0 },
      'again: nothing waiting',
    );

    await t.deps.db.updateTable('channels').set({ enabled: 0 }).where('id', '=', other.id).execute();
    assertProblem(await admin.api.post(`/api/channels/${other.id}/resend-dead`), 409, 'channel-disabled');
    assert.equal(await stateOf(otherDead), 'dead');
    assertProblem(await admin.api.post('/api/channels/nothing-here/resend-dead'), 404, 'not-found');
  });

  test('viewers’ tokens get 403 on every delivery route, reads included; read-only tokens read but never re-send', async () => {
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const dead = await one(ch.id, 'dead', 'dead');
    const viewer = await buildApiUser(t, 'viewer');
    const calls = (api: ApiClient) => [
      api.get('/api/deliveries'),
      api.get(`/api/deliveries/${dead}`),
      api.post(`/api/deliveries/${dead}/resend`),
      api.post(`/api/channels/${ch.id}/resend-dead`),
    ];
    for (const res of await Promise.all(calls(viewer.api))) assertProblem(res, 403, 'admin-only');
    const readOnly = await buildApiUser(t, 'admin', { readOnly: true });
    const [list, detail, ...writes] = await Promise.all(calls(readOnly.api));
    assert.deepEqual([list!.status, detail!.status], [200, 200]);
    for (const res of writes) assertProblem(res, 403, 'read-only-token');
    assert.equal((await t.deps.db.selectFrom('deliveries').select('id').execute()).length, 1, 'nothing re-sent');
  });

  test('API acts show in the console and console acts in the API', async () => {
    const ch = await buildChannel(t, { url: 'https://hooks.example.com/both', createdBy: admin.account.id });
    const viaApi = await one(ch.id, 'dead', 'Re-sent through the API');
    const viaConsole = await one(ch.id, 'dead', 'Re-sent in the console');
    const { client } = await signedInAs(t, 'admin');

    assert.equal((await admin.api.post(`/api/deliveries/${viaApi}/resend`)).status, 201);
    const pendingTab = (await client.get('/settings?tab=deliveries&state=pending')).text;
    assert.match(
      pendingTab,
      /<tr class="delivery state-pending"><td><a href="\/messages\/[\w-]+">Re-sent through the API<\/a>/,
    );

    assert.equal((await client.post('/settings/deliveries/resend', { delivery: viaConsole })).status, 303);
    const pending = await admin.api.get('/api/deliveries?state=pending');
    assert.deepEqual(pending.body.items.map((d: any) => d.message.headline).sort(), [
      'Re-sent in the console',
      'Re-sent through the API',
    ]);
    assert.equal((await admin.api.get(`/api/deliveries/${viaConsole}`)).body.superseded, true);
  });
});

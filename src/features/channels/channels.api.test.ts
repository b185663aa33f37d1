// The channels API: the console's rules over a token, every answer checked against the OpenAPI document.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { type ApiClient, assertProblem, buildApiUser, type ApiResponse } from '../../../test/helpers/api.ts';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { closedPort, useReceiver } from '../../../test/helpers/receiver.ts';
import { createDeliveryWorker } from '../delivery/delivery.worker.ts';

const SECRET = 'whsec-Api-S3cret-Value';

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof buildApiUser>>;
  const receiver = useReceiver();
  /** Every answer of the test, so one check at the end can say no secret ever went out. */
  let answers: ApiResponse[];
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
    admin = await buildApiUser(t, 'admin');
    answers = [];
    const request = admin.api.request.bind(admin.api);
    admin.api.request = async (...args) => {
      const res = await request(...args);
      answers.push(res);
      return res;
    };
  });
  afterEach(() => {
    for (const res of answers)
      assert.ok(!res.text.includes(SECRET) && !res.text.includes('second-secret'), `a secret in ${res.text}`);
    assert.ok(!t.logs.join('').includes(SECRET), 'nor in a log line');
  });

  const rows = () => t.deps.db.selectFrom('channels').selectAll().orderBy('created_at').orderBy('id').execute();
  const row = (id: string) =>
    t.deps.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('create: 201 with Location, authored by the token’s account, secret stored and shown only as has_secret', async () => {
    const res = await admin.api.post('/api/channels', {
      url: ' https://Hooks.Example.com/svc/T1 ',
      classes: ['drift', 'clock', 'drift'],
      secret: SECRET,
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('location'), `/api/channels/${res.body.id}`);
    assert.deepEqual(res.body, {
      id: res.body.id,
      url: 'https://hooks.example.com/svc/T1',
      classes: ['clock', 'drift'],
      enabled: true,
      has_secret: true,
      health: {
        state: 'healthy',
        consecutive_failures: 0,
        failing_since: null,
        last_error: null,
        last_error_at: null,
        last_success_at: null,
      },
      created_at: new Date(t.clock.now()).toISOString(),
      updated_at: new Date(t.clock.now()).toISOString(),
      created_by: { id: admin.account.id, username: admin.account.username },
    });
    const stored = await row(res.body.id);
    assert.deepEqual([stored.secret, stored.created_by, stored.enabled], [SECRET, admin.account.id, 1]);

    const one = await admin.api.get(res.headers.get('location')!);
    assert.deepEqual(one.body, res.body);
    const disabled = await admin.api.post('/api/channels', {
      url: 'https://hooks.example.com/off',
      classes: ['coverage'],
      enabled: false,
      secret: null,
    });
    assert.equal(disabled.status, 201);
    assert.deepEqual(
      [disabled.body.enabled, disabled.body.has_secret, disabled.body.health.state],
      [false, false, 'disabled'],
    );
    const loopback = await admin.api.post('/api/channels', { url: 'http://127.0.0.1:8080/hook', classes: ['clock'] });
    assert.equal(loopback.status, 201, 'http:// to a loopback IP literal is accepted');
  });

  test('API acts show in the console and console acts in the API', async () => {
    const made = await admin.api.post('/api/channels', {
      url: 'https://api-made.example.com/hook',
      classes: ['drift'],
    });
    const console = await signedInAs(t, 'admin');
    assert.match(
      (await console.client.get('/settings?tab=channels')).text,
      new RegExp(`href="/settings/channels/${made.body.id}">https://api-made\\.example\\.com/hook</a>`),
    );
    assert.match(
      (await console.client.get(`/settings/channels/${made.body.id}`)).text,
      new RegExp(`by ${admin.account.username}`),
    );

    assert.equal(
      (
        await console.client.post('/settings/channels', {
          url: 'https://console-made.example.com/',
          classes: 'coverage',
          secret: SECRET,
        })
      ).status,
      303,
    );
    const list = await admin.api.get('/api/channels');
    const theirs = list.body.items.find((c: any) => c.url === 'https://console-made.example.com/');
    assert.deepEqual(
      [theirs.classes, theirs.has_secret, theirs.created_by],
      [['coverage'], true, { id: console.account.id, username: console.account.username }],
    );

    assert.equal((await admin.api.delete(`/api/channels/${theirs.id}`)).status, 204);
    assert.doesNotMatch((await console.client.get('/settings?tab=channels')).text, /console-made/);
  });

  test('create refusals: 422 naming the field with the console’s words, nothing stored, the secret never echoed', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { url: 'https://10.0.0.1/', classes: ['drift'], secret: SECRET },
        'url',
        /10\.0\.0\.1 is an internal address \(private\)/,
      ],
      [{ url: 'https://169.254.169.254/latest', classes: ['drift'] }, 'url', /internal address/],
      [{ url: 'https://[::ffff:10.0.0.1]/', classes: ['drift'] }, 'url', /internal address/],
      [{ url: 'http://localhost:1/', classes: ['drift'] }, 'url', /host name, not an IP address/],
      [{ url: 'https://localhost/', classes: ['drift'] }, 'url', /internal address/],
      [{ url: 'http://hooks.example.com/', classes: ['drift'] }, 'url', /Plain http:\/\/ is refused/],
      [{ url: 'not a url', classes: ['drift'] }, 'url', /not an absolute URL/],
      [{ url: 'https://hooks.example.com/', classes: [] }, 'classes', /Choose at least one class/],
      [{ url: 'https://hooks.example.com/', classes: ['drift', 'weather'] }, 'classes.1', /.+/],
      [{ url: 'https://hooks.example.com/', classes: 'drift' }, 'classes', /^Must be a list\.$/],
      [{ url: 'https://hooks.example.com/' }, 'classes', /^Required\.$/],
      [{ classes: ['drift'] }, 'url', /^Required\.$/],
      [
        { url: 'https://hooks.example.com/', classes: ['drift'], secret: 'x'.repeat(513) },
        'secret',
        /at most 512 characters/,
      ],
      [{ url: 'https://hooks.example.com/', classes: ['drift'], secrte: SECRET }, '(body)', /.+/],
    ];
    for (const [body, field, detail] of cases) {
      const res = await admin.api.post('/api/channels', body);
      assertProblem(res, 422, 'invalid');
      const error = res.body.errors.find((e: any) => e.field === field);
      assert.ok(error, `${JSON.stringify(body)}: ${res.text}`);
      assert.match(error.detail, detail, JSON.stringify(body));
      assert.ok(!res.text.includes('x'.repeat(513)));
    }
    assert.equal((await rows()).length, 0);
  });

  test('update: absent fields keep, secret string replaces, null clears, absent keeps; refusals change nothing', async () => {
    const { body: ch } = await admin.api.post('/api/channels', {
      url: 'https://hooks.example.com/a',
      classes: ['drift'],
      secret: SECRET,
    });
    t.clock.advance(1000);
    const patch = (body: Record<string, unknown>) => admin.api.patch(`/api/channels/${ch.id}`, body);

    let res = await patch({ classes: ['coverage', 'clock'] });
    assert.equal(res.status, 200);
    assert.deepEqual(
      [res.body.classes, res.body.url, res.body.enabled, res.body.has_secret],
      [['clock', 'coverage'], 'https://hooks.example.com/a', true, true],
    );
    assert.equal(res.body.updated_at, new Date(t.clock.now()).toISOString());
    assert.equal((await row(ch.id)).secret, SECRET, 'absent keeps the secret');

    res = await patch({ secret: 'second-secret' });
    assert.equal((await row(ch.id)).secret, 'second-secret', 'a string replaces');
    assert.equal(res.body.has_secret, true);

    assertProblem(await patch({ secret: '  ' }), 422, 'invalid');
    assert.equal((await row(ch.id)).secret, 'second-secret', 'a blank secret is refused, never read as "keep"');

    res = await patch({ secret: null });
    assert.equal((await row(ch.id)).secret, null, 'null clears');
    assert.equal(res.body.has_secret, false);

    res = await patch({ url: 'https://hooks.example.com/b', enabled: false });
    assert.deepEqual(
      [res.body.url, res.body.enabled, res.body.health.state, res.body.classes],
      ['https://hooks.example.com/b', false, 'disabled', ['clock', 'coverage']],
    );

    for (const [body, field] of [
      [{ url: 'https://10.0.0.8/', secret: 'fourth-secret' }, 'url'],
      [{ url: 'http://localhost:1/' }, 'url'],
      [{ classes: [] }, 'classes'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ id: 'other' }, '(body)'],
    ] as const) {
      const refused = await patch(body);
      assertProblem(refused, 422, 'invalid');
      assert.ok(
        refused.body.errors.some((e: any) => e.field === field),
        refused.text,
      );
      assert.ok(!refused.text.includes('fourth-secret'));
    }
    const after = await row(ch.id);
    assert.deepEqual(
      [after.url, after.classes, after.secret, after.enabled],
      ['https://hooks.example.com/b', 'clock,coverage', null, 0],
      'refused updates change nothing',
    );

    assertProblem(await admin.api.patch('/api/channels/nothing-here', { enabled: true }), 404, 'not-found');
    assertProblem(await admin.api.patch('/api/channels/not%20an%20id', { enabled: true }), 404, 'not-found');
  });

  test('disabling cancels pending deliveries as the console’s update does (the worker’s sweep); delete is idempotent and cancels too', async () => {
    const { body: a } = await admin.api.post('/api/channels', {
      url: 'https://hooks.example.com/a',
      classes: ['drift'],
    });
    const { body: b } = await admin.api.post('/api/channels', {
      url: 'https://hooks.example.com/b',
      classes: ['drift'],
    });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [a.id, b.id],
      now: t.clock.now(),
    });
    // Channel b's delivery is not due yet, so the worker below tries nothing (no traffic leaves the machine).
    await t.deps.db
      .updateTable('deliveries')
      .set({ next_attempt_at: t.clock.now() + 3600_000 })
      .where('id', '=', deliveryIds.get(b.id)!)
      .execute();
    assert.equal((await admin.api.patch(`/api/channels/${a.id}`, { enabled: false })).status, 200);
    const w = createDeliveryWorker(t.deps);
    try {
      await w.drain();
    } finally {
      await w.stop();
    }
    const state = (id: string) =>
      t.deps.db
        .selectFrom('deliveries')
        .select(['state', 'last_error', 'channel_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    assert.deepEqual(await state(deliveryIds.get(a.id)!), {
      state: 'cancelled',
      last_error: 'channel disabled',
      channel_id: a.id,
    });

    assert.equal((await state(deliveryIds.get(b.id)!)).state, 'pending', 'an enabled channel’s delivery is left alone');
    assert.equal((await admin.api.delete(`/api/channels/${b.id}`)).status, 204);
    assert.equal((await admin.api.delete(`/api/channels/${b.id}`)).status, 204, 'again: idempotent');
    assert.equal((await admin.api.delete('/api/channels/never-was')).status, 204);
    assert.deepEqual(await state(deliveryIds.get(b.id)!), {
      state: 'cancelled',
      last_error: 'channel deleted',
      channel_id: null,
    });
    assertProblem(await admin.api.get(`/api/channels/${b.id}`), 404, 'not-found');
    assert.deepEqual(
      (await rows()).map((r) => r.id),
      [a.id],
    );
  });

  test('viewers’ tokens get 403 on every channel route, reads included; read-only tokens read but never write', async () => {
    const ch = await buildChannel(t, { createdBy: admin.account.id, secret: SECRET });
    const before = await rows();
    const viewer = await buildApiUser(t, 'viewer');
    const calls = (api: ApiClient) => [
      api.get('/api/channels'),
      api.get(`/api/channels/${ch.id}`),
      api.post('/api/channels', { url: 'https://hooks.example.com/new', classes: ['drift'] }),
      api.patch(`/api/channels/${ch.id}`, { enabled: false }),
      api.delete(`/api/channels/${ch.id}`),
      api.post(`/api/channels/${ch.id}/check`),
    ];
    for (const res of await Promise.all(calls(viewer.api))) assertProblem(res, 403, 'admin-only');
    const readOnly = await buildApiUser(t, 'admin', { readOnly: true });
    const [list, one, ...writes] = await Promise.all(calls(readOnly.api));
    assert.equal(list!.status, 200);
    assert.equal(one!.status, 200);
    assert.ok(!list!.text.includes(SECRET) && !one!.text.includes(SECRET));
    for (const res of writes) assertProblem(res, 403, 'read-only-token');
    assert.deepEqual(await rows(), before);
  });

  test('the list pages by cursor, oldest first, without gaps or repeats; a cursor it did not hand out is a 422', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Two channels per instant, so pages break inside a tie of created_at.
      if (i % 2 === 0) t.clock.advance(1000);
      made.push((await buildChannel(t, { createdBy: admin.account.id })).id);
    }
    const seen: string[][] = [];
    let path = '/api/channels?limit=3';
    for (;;) {
      const res = await admin.api.get(path);
      assert.equal(res.status, 200);
      seen.push(res.body.items.map((c: any) => c.id));
      if (res.body.next_cursor === null) break;
      path = `/api/channels?limit=3&cursor=${encodeURIComponent(res.body.next_cursor)}`;
    }
    assert.deepEqual(
      seen.map((p) => p.length),
      [3, 3, 1],
    );
    const expected = (await rows()).map((r) => r.id);
    assert.deepEqual(seen.flat(), expected);
    assert.deepEqual(new Set(seen.flat()), new Set(made));

    for (const cursor of [
      'garbage!',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('["x",1]').toString('base64url'),
      Buffer.from('["pending",1,"x"]').toString('base64url'),
    ]) {
      const res = await admin.api.get(`/api/channels?cursor=${encodeURIComponent(cursor)}`);
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['query', 'cursor']],
      );
    }
    for (const limit of ['0', '101', 'many']) {
      const res = await admin.api.get(`/api/channels?limit=${limit}`);
      assertProblem(res, 422, 'invalid');
      assert.equal(res.body.errors[0].field, 'limit');
    }
  });

  test('health: failing since the streak began, with the last error and success, as RFC 3339 times', async () => {
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const since = t.clock.now() - 3 * 3600_000;
    await t.deps.db
      .updateTable('channels')
      .set({
        consecutive_failures: 3,
        last_error: 'HTTP 503',
        last_error_at: t.clock.now(),
        failing_since: since,
        last_success_at: since - 1000,
      })
      .where('id', '=', ch.id)
      .execute();
    const res = await admin.api.get(`/api/channels/${ch.id}`);
    assert.deepEqual(res.body.health, {
      state: 'failing',
      consecutive_failures: 3,
      failing_since: new Date(since).toISOString(),
      last_error: 'HTTP 503',
      last_error_at: new Date(t.clock.now()).toISOString(),
      last_success_at: new Date(since - 1000).toISOString(),
    });
    assertProblem(await admin.api.get('/api/channels/nothing-here'), 404, 'not-found');
  });

  test('check connection: each step, nothing sent to the receiver, nothing stored; 404 for an unknown channel', async () => {
    const rx = receiver();
    const ch = await buildChannel(t, { createdBy: admin.account.id, url: `${rx.url}/hook` });
    const res = await admin.api.post(`/api/channels/${ch.id}/check`);
    assert.equal(res.status, 200);
    assert.equal(res.body.ok, true);
    assert.deepEqual(
      res.body.steps.map((s: any) => [s.step, s.outcome]),
      [
        ['resolve', 'ok'],
        ['policy', 'ok'],
        ['tcp', 'ok'],
        ['tls', 'skipped'],
      ],
    );
    assert.match(res.body.steps[2].detail, new RegExp(`Connected to 127\\.0\\.0\\.1 port ${rx.port}`));
    assert.equal(rx.connections, 1);
    assert.equal(rx.received.length, 0, 'no HTTP request reached the receiver');
    assert.equal((await t.deps.db.selectFrom('delivery_attempts').select('delivery_id').execute()).length, 0);
    assert.equal((await row(ch.id)).consecutive_failures, 0);

    const port = await closedPort();
    const closed = await buildChannel(t, { createdBy: admin.account.id, url: `http://127.0.0.1:${port}/hook` });
    const refused = await admin.api.post(`/api/channels/${closed.id}/check`);
    assert.equal(refused.body.ok, false);
    assert.equal(refused.body.steps[2].outcome, 'failed');
    assert.match(refused.body.steps[2].detail, new RegExp(`Could not connect to port ${port}: connection refused`));
    assert.equal(rx.connections, 1, 'the refused check connected nowhere');

    assertProblem(await admin.api.post('/api/channels/nothing-here/check'), 404, 'not-found');
  });
});

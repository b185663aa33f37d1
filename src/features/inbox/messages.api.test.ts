// The message store over the API: the list (filters, cursor paging), one message (what viewers and admins see), and
// the read marks, on both databases; every answer is also checked against the OpenAPI document by the test client.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { ApiClient, assertProblem, buildApiUser } from '../../../test/helpers/api.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { encodeCursor } from '../../http/api.ts';
import { createToken } from '../tokens/tokens.service.ts';

/** The ids of a list answer, in order. */
const ids = (res: { body: any }): string[] => res.body.items.map((i: any) => i.id);

/** The bell's count on a console page ('0' when it shows no badge). */
const bell = (html: string) =>
  /<span class="bell">([^<]+)<span class="visually-hidden"> unread<\/span><\/span>/.exec(html)?.[1] ?? '0';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  test('any token lists messages newest first with every field; admins also see delivery trouble', async () => {
    const viewer = await buildApiUser(t, 'viewer');
    const admin = await buildApiUser(t, 'admin');
    const older = await buildMessage(t, {
      cause: 'declared-input',
      sourceId: 'zone-1',
      headline: 'Older one',
      subject: { kind: 'zone', key: 'example.com' },
    });
    t.clock.advance(60_000);
    const channel = await buildChannel(t, { createdBy: admin.account.id });
    const newer = await buildMessage(t, {
      cause: 'threshold',
      headline: 'Certificate expires soon.',
      census: 4,
      subject: { kind: 'certificate', key: 'api.example.com' },
      instant: Date.UTC(2026, 0, 14, 9, 30),
    });
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', attempts: 5 })
      .where('channel_id', '=', channel.id)
      .execute();

    const res = await viewer.api.get('/api/messages');
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res), [newer, older]);
    assert.equal(res.body.next_cursor, null);
    assert.deepEqual(res.body.items[0], {
      id: newer,
      class: 'clock',
      cause: 'threshold',
      subject: { kind: 'certificate', key: 'api.example.com' },
      instant: '2026-01-14T09:30:00.000Z',
      headline: 'Certificate expires soon.',
      census: 4,
      link: 'https://svc.example.test/subjects/certificate/api.example.com',
      created_at: new Date(t.clock.now()).toISOString(),
      read: false,
    });
    assert.equal(res.body.items[1].link, 'https://svc.example.test/sources/zone-1');
    assert.equal(res.body.items[1].census, null);

    const asAdmin = await admin.api.get('/api/messages');
    assert.deepEqual(asAdmin.body.items[0].delivery_trouble, { dead: 1, failing: 0 });
    assert.ok(!('delivery_trouble' in res.body.items[0]), 'not for viewers');
    const readOnly = await buildApiUser(t, 'viewer', { readOnly: true });
    assert.deepEqual(ids(await readOnly.api.get('/api/messages')), [newer, older], 'a read-only token reads');
  });

  test('each filter narrows the list: unread, class, cause, subject kind and key, since and until', async () => {
    const { api } = await buildApiUser(t, 'viewer');
    const start = t.clock.now();
    const drift = await buildMessage(t, { subject: { kind: 'host', key: 'web-1' } });
    t.clock.advance(1000);
    const aperture = await buildMessage(t, {
      cause: 'aperture',
      seedId: 'seed-1',
      subject: { kind: 'host', key: 'web-2' },
    });
    t.clock.advance(1000);
    const declared = await buildMessage(t, {
      cause: 'declared-input',
      sourceId: 'src-1',
      subject: { kind: 'zone', key: 'web-1' },
    });
    t.clock.advance(1000);
    const threshold = await buildMessage(t, { cause: 'threshold', subject: { kind: 'host', key: 'web-1' } });
    const at = (ms: number) => encodeURIComponent(new Date(start + ms).toISOString());

    const cases: [string, string[]][] = [
      ['', [threshold, declared, aperture, drift]],
      ['class=coverage', [declared, aperture]],
      ['class=clock', [threshold]],
      ['cause=aperture', [aperture]],
      ['subject_kind=host', [threshold, aperture, drift]],
      ['subject_key=web-1', [threshold, declared, drift]],
      ['subject_kind=host&subject_key=web-1', [threshold, drift]],
      ['subject_key=WEB-1', []],
      [`since=${at(1000)}`, [threshold, declared, aperture]],
      [`until=${at(1000)}`, [drift]],
      [`since=${at(1000)}&until=${at(3000)}`, [declared, aperture]],
      ['class=coverage&cause=threshold', []],
    ];
    for (const [query, expected] of cases)
      assert.deepEqual(ids(await api.get(`/api/messages?${query}`)), expected, query);

    assert.equal((await api.post('/api/messages/read', { ids: [declared, drift] })).status, 204);
    assert.deepEqual(ids(await api.get('/api/messages?unread=true')), [threshold, aperture]);
    assert.deepEqual(ids(await api.get('/api/messages?unread=false')), [declared, drift]);
    assert.deepEqual(ids(await api.get('/api/messages?unread=true&subject_key=web-1')), [threshold]);
    assert.equal((await api.post('/api/messages/unread', { ids: [drift] })).status, 204);
    assert.deepEqual(ids(await api.get('/api/messages?unread=true')), [threshold, aperture, drift]);
    assert.equal((await api.post('/api/messages/read-all')).status, 204);
    assert.deepEqual(ids(await api.get('/api/messages?unread=true')), []);
    assert.equal((await api.post('/api/messages/read-all', {})).status, 204, 'an empty object is fine too');

    const bad: [string, string][] = [
      ['class=urgent', 'class'],
      ['cause=nothing', 'cause'],
      ['unread=yes', 'unread'],
      ['since=yesterday', 'since'],
      ['until=2026-02-30T00:00:00Z', 'until'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      [`subject_key=${'k'.repeat(513)}`, 'subject_key'],
    ];
    for (const [query, field] of bad) {
      const res = await api.get(`/api/messages?${query}`);
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['query', field]],
        query,
      );
    }
    // zod's type refusals in the service's words, not "Invalid input: expected number, received NaN".
    assert.deepEqual((await api.get('/api/messages?limit=abc')).body.errors, [
      { in: 'query', field: 'limit', detail: 'Must be a number.' },
    ]);
  });

  test('cursor paging walks every message once, newest first, even when messages share a millisecond; a foreign cursor is 422', async () => {
    const { api } = await buildApiUser(t, 'viewer');
    const made: string[] = [];
    for (let i = 0; i < 8; i++) {
      made.push(await buildMessage(t));
      if (i % 3 === 0) t.clock.advance(1000);
    }
    const pages: string[][] = [];
    let path: string | undefined = '/api/messages?limit=3';
    while (path) {
      const res: any = await api.get(path);
      assert.equal(res.status, 200);
      pages.push(ids(res));
      path =
        res.body.next_cursor === null
          ? undefined
          : `/api/messages?limit=3&cursor=${encodeURIComponent(res.body.next_cursor)}`;
    }
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 2],
    );
    const seen = pages.flat();
    assert.equal(new Set(seen).size, made.length, 'no duplicates');
    assert.deepEqual(new Set(seen), new Set(made), 'no gaps');
    const rows = await t.deps.db.selectFrom('messages').select(['id', 'created_at']).execute();
    const at = new Map(rows.map((r) => [r.id, r.created_at]));
    for (let i = 1; i < seen.length; i++) assert.ok(at.get(seen[i - 1]!)! >= at.get(seen[i]!)!, 'newest first');

    for (const cursor of [
      'nonsense',
      encodeCursor(['x', 'y']),
      encodeCursor([1]),
      encodeCursor([1, 'bad/id']),
      Buffer.from('{"a":1}').toString('base64url'),
    ]) {
      const res = await api.get(`/api/messages?cursor=${encodeURIComponent(cursor)}`);
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['query', 'cursor']],
      );
    }
  });

  test('one message: viewers see states and verdicts only; admins also URLs, errors, durations and excerpts; reading does not mark it read', async () => {
    const admin = await buildApiUser(t, 'admin');
    const viewer = await buildApiUser(t, 'viewer');
    const ok = await buildChannel(t, {
      createdBy: admin.account.id,
      url: 'https://hooks.example.com/T0KEN-A/x?key=s3cr3t',
      secret: 'channel-signing-secret',
    });
    const dead = await buildChannel(t, { createdBy: admin.account.id, url: 'https://dead.example.net/T0KEN-B' });
    const id = await buildMessage(t, { headline: 'Moved.' });
    const now = t.clock.now();
    const deliveryOf = async (channelId: string) =>
      (
        await t.deps.db
          .selectFrom('deliveries')
          .select('id')
          .where('channel_id', '=', channelId)
          .executeTakeFirstOrThrow()
      ).id;
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'delivered', attempts: 1, delivered_at: now })
      .where('channel_id', '=', ok.id)
      .execute();
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', attempts: 1, last_error: 'HTTP 500 from receiver' })
      .where('channel_id', '=', dead.id)
      .execute();
    await t.deps.db
      .insertInto('delivery_attempts')
      .values([
        {
          delivery_id: await deliveryOf(ok.id),
          attempt_no: 1,
          started_at: now,
          duration_ms: 12,
          verdict: 'delivered',
          status_code: 204,
          error: null,
          response_excerpt: null,
        },
        {
          delivery_id: await deliveryOf(dead.id),
          attempt_no: 1,
          started_at: now,
          duration_ms: 40,
          verdict: 'failed',
          status_code: 500,
          error: 'HTTP 500 from receiver',
          response_excerpt: 'stack trace at RECEIVER-INTERNALS',
        },
      ])
      .execute();

    const asAdmin = await admin.api.get(`/api/messages/${id}`);
    assert.equal(asAdmin.status, 200);
    assert.equal(asAdmin.body.headline, 'Moved.');
    assert.equal(asAdmin.body.read, false);
    const body = (await t.deps.db.selectFrom('messages').select('body').where('id', '=', id).executeTakeFirstOrThrow())
      .body;
    assert.equal(asAdmin.body.channel_body, body);
    assert.deepEqual(asAdmin.body.deliveries.counts, { delivered: 1, pending: 0, dead: 1, cancelled: 0 });
    const deadRow = asAdmin.body.deliveries.items[0];
    assert.equal(deadRow.channel_url, 'https://dead.example.net/T0KEN-B', 'undelivered first');
    assert.equal(deadRow.last_error, 'HTTP 500 from receiver');
    assert.equal(deadRow.resendable, true);
    assert.deepEqual(deadRow.attempt_log, [
      {
        attempt_no: 1,
        started_at: new Date(now).toISOString(),
        verdict: 'failed',
        status_code: 500,
        duration_ms: 40,
        error: 'HTTP 500 from receiver',
        excerpt: 'stack trace at RECEIVER-INTERNALS',
      },
    ]);
    assert.equal(asAdmin.body.deliveries.items[1].channel_url, 'https://hooks.example.com/T0KEN-A/x?key=s3cr3t');

    const asViewer = await viewer.api.get(`/api/messages/${id}`);
    assert.equal(asViewer.status, 200);
    assert.deepEqual(asViewer.body.deliveries.counts, asAdmin.body.deliveries.counts);
    assert.deepEqual(
      asViewer.body.deliveries.items.map((d: any) => [
        d.channel_id,
        d.state,
        d.attempts,
        d.attempt_log.map((a: any) => [a.verdict, a.status_code]),
      ]),
      [
        [dead.id, 'dead', 1, [['failed', null]]],
        [ok.id, 'delivered', 1, [['delivered', 204]]],
      ],
    );
    for (const hidden of [
      'T0KEN',
      's3cr3t',
      'hooks.example.com',
      'dead.example.net',
      'HTTP 500',
      'RECEIVER-INTERNALS',
      'channel-signing-secret',
      viewer.token,
    ]) {
      assert.ok(!asViewer.text.includes(hidden), `viewer sees ${hidden}`);
    }
    assert.ok(!asAdmin.text.includes('channel-signing-secret'), 'no channel secret, even for admins');

    // Reading through the API marks nothing; the console's page does.
    assert.deepEqual(ids(await viewer.api.get('/api/messages?unread=true')), [id]);
    assertProblem(await viewer.api.get('/api/messages/no-such-message'), 404, 'not-found');
    assertProblem(await viewer.api.get('/api/messages/bad%20id'), 404, 'not-found');
  });

  test('read marks: per account, unknown ids ignored, bad ids 422, viewers may, read-only tokens may not', async () => {
    const alice = await buildApiUser(t, 'viewer');
    const bob = await buildApiUser(t, 'viewer');
    const a = await buildMessage(t);
    const b = await buildMessage(t);
    assert.equal((await alice.api.post('/api/messages/read', { ids: [a, 'no-such-message'] })).status, 204);
    assert.deepEqual(
      ids(await alice.api.get('/api/messages?unread=true')),
      ids(await alice.api.get('/api/messages')).filter((x) => x !== a),
    );
    assert.equal((await bob.api.get('/api/messages?unread=true')).body.items.length, 2, 'bob still has both unread');
    assert.equal((await alice.api.post('/api/messages/unread', { ids: [a, 'no-such-message'] })).status, 204);
    assert.deepEqual(new Set(ids(await alice.api.get('/api/messages?unread=true'))), new Set([a, b]));

    for (const path of ['/api/messages/read', '/api/messages/unread']) {
      for (const [body, field] of [
        [{ ids: [] }, 'ids'],
        [{}, 'ids'],
        [{ ids: ['a/b'] }, 'ids.0'],
        [{ ids: Array(201).fill(a) }, 'ids'],
        [{ ids: [a], also: 1 }, '(body)'],
      ] as const) {
        const res = await alice.api.post(path, body as any);
        assertProblem(res, 422, 'invalid');
        assert.equal(res.body.errors[0].field, field, `${path} ${JSON.stringify(body).slice(0, 40)}`);
      }
    }
    assertProblem(await alice.api.post('/api/messages/read-all', { before: '2026-01-01T00:00:00Z' }), 422, 'invalid');

    const readOnly = await buildApiUser(t, 'admin', { readOnly: true });
    for (const path of ['/api/messages/read', '/api/messages/unread', '/api/messages/read-all']) {
      assertProblem(await readOnly.api.post(path, { ids: [a] }), 403, 'read-only-token');
    }
    assert.equal((await readOnly.api.get('/api/messages?unread=true')).body.items.length, 2, 'nothing marked');
  });

  test('API read marks move the console’s bell and list, and the console’s marks show through the API', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const { token } = await createToken(t.deps, account.id, { name: 'ci', expiry: 'never' });
    const api = new ApiClient(t, token);
    const first = await buildMessage(t, { headline: 'First through the API' });
    t.clock.advance(1000);
    const second = await buildMessage(t, { headline: 'Second through the console' });
    assert.equal(bell((await client.get('/inbox')).text), '2');

    assert.equal((await api.post('/api/messages/read', { ids: [first] })).status, 204);
    const inbox = await client.get('/inbox?show=unread');
    assert.equal(bell(inbox.text), '1');
    assert.ok(!inbox.text.includes('First through the API') && inbox.text.includes('Second through the console'));

    // The console opens the second message (which marks it read) and marks the first unread again.
    assert.equal((await client.get(`/messages/${second}`)).status, 200);
    assert.equal((await client.post('/messages/unread', { id: first })).status, 303);
    const listed = (await api.get('/api/messages')).body.items.map((i: any) => [i.id, i.read]);
    assert.deepEqual(listed, [
      [second, true],
      [first, false],
    ]);
    assert.equal((await api.post('/api/messages/read-all')).status, 204);
    assert.equal(bell((await client.get('/inbox')).text), '0');
  });
});

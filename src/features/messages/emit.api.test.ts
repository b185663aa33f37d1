// POST /api/messages on both databases: emit as `svc emit` does (same fields, same checks, same messages), admins only,
// and the Idempotency-Key: replay, a reused key, racing requests, expiry after 24 hours and the housekeeping prune.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { assertProblem, buildApiUser } from '../../../test/helpers/api.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, clearOutbox } from '../../../test/helpers/outbox.ts';
import { parseEmitArgs } from '../../cli/emit.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { createApi } from '../../api.ts';
import { NOT_ADMIN } from '../refusals.ts';
import { validateEmitInput, type EmitInput } from './emit.service.ts';
import { IDEMPOTENCY_TTL_MS } from './idempotency.service.ts';
import { INSTANT_SPELLING } from './instant.ts';

/** A valid emit body; tests override parts of it. */
const BODY = { cause: 'drift', subject: { kind: 'service', key: 'payments-api' }, headline: 'The service moved.' };

/** The emit service's own message for a field of an otherwise valid input. */
function serviceSays(overrides: Partial<EmitInput>, field: keyof ReturnType<typeof validateEmitInput>): string {
  const message = validateEmitInput({
    cause: 'drift',
    subject: { kind: 'service', key: 'k' },
    instant: 0,
    headline: 'h',
    ...overrides,
  })[field];
  assert.ok(message, `the service refuses ${field}`);
  return message;
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  const count = async (table: 'messages' | 'deliveries') =>
    Number(
      (
        await t.deps.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('an admin emits: 201 with the message and Location, queued for each enabled channel of its class, workers woken, shown in the console', async () => {
    const { account, api } = await buildApiUser(t, 'admin');
    await buildChannel(t, { createdBy: account.id, classes: 'drift', secret: 'channel-signing-secret' });
    await buildChannel(t, { createdBy: account.id, classes: ['drift', 'clock'] });
    await buildChannel(t, { createdBy: account.id, classes: 'coverage' });
    await buildChannel(t, { createdBy: account.id, classes: 'drift', enabled: false });
    let woken = 0;
    const unsubscribe = t.deps.wakeup.subscribe(() => woken++);
    const res = await api.post('/api/messages', { ...BODY, instant: '2026-01-15T13:00:00+01:00', census: 3 });
    unsubscribe();
    assert.equal(res.status, 201, res.text);
    const id = res.body.id;
    assert.equal(res.headers.get('location'), `/api/messages/${id}`);
    assert.equal(res.headers.get('idempotent-replayed'), null);
    assert.deepEqual(res.body, {
      id,
      class: 'drift',
      cause: 'drift',
      subject: { kind: 'service', key: 'payments-api' },
      instant: '2026-01-15T12:00:00.000Z',
      headline: 'The service moved.',
      census: 3,
      link: 'https://svc.example.test/subjects/service/payments-api',
      created_at: new Date(t.clock.now()).toISOString(),
      deliveries_queued: 2,
    });
    assert.equal(woken, 1);
    assert.equal(await count('messages'), 1);
    assert.equal(await count('deliveries'), 2);
    assert.ok(!res.text.includes('channel-signing-secret') && !res.text.includes(api.token!));
    const stored = await t.deps.db.selectFrom('messages').select('body').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(JSON.parse(stored.body).instant, '2026-01-15T12:00:00.000Z');

    // Without an instant the cause happened now; the message reads back through the API and shows in the console.
    const later = await api.post('/api/messages', {
      cause: 'aperture',
      seed_id: 'seed-7',
      subject: { kind: 'scope', key: 'corp' },
      headline: 'Aperture widened <b>.',
    });
    assert.equal(later.status, 201);
    assert.equal(later.body.instant, new Date(t.clock.now()).toISOString());
    assert.equal(later.body.link, 'https://svc.example.test/seeds/seed-7');
    assert.equal((await api.get(`/api/messages/${id}`)).body.deliveries.counts.pending, 2);
    const { client } = await signedInAs(t, 'admin');
    const inbox = await client.get('/inbox');
    assert.ok(inbox.text.includes(`/messages/${id}`) && inbox.text.includes('Aperture widened &lt;b&gt;.'));
  });

  test('each field is checked by the emit service, with its own words; nothing is stored for a refused request', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['unknown cause', { cause: 'nope' }, 'cause', serviceSays({ cause: 'nope' }, 'cause')],
      [
        'blank kind',
        { subject: { kind: ' ', key: 'k' } },
        'subject.kind',
        serviceSays({ subject: { kind: ' ', key: 'k' } }, 'subjectKind'),
      ],
      [
        'kind too long',
        { subject: { kind: 'k'.repeat(65), key: 'k' } },
        'subject.kind',
        serviceSays({ subject: { kind: 'k'.repeat(65), key: 'k' } }, 'subjectKind'),
      ],
      [
        'key with a line break',
        { subject: { kind: 'k', key: 'a\nb' } },
        'subject.key',
        serviceSays({ subject: { kind: 'k', key: 'a\nb' } }, 'subjectKey'),
      ],
      [
        'key ..',
        { subject: { kind: 'k', key: '..' } },
        'subject.key',
        serviceSays({ subject: { kind: 'k', key: '..' } }, 'subjectKey'),
      ],
      [
        'headline too long',
        { headline: 'h'.repeat(1001) },
        'headline',
        serviceSays({ headline: 'h'.repeat(1001) }, 'headline'),
      ],
      ['negative census', { census: -1 }, 'census', serviceSays({ census: -1 }, 'census')],
      ['fractional census', { census: 1.5 }, 'census', serviceSays({ census: 1.5 }, 'census')],
      [
        'instant before 1970',
        { instant: '1969-12-31T23:59:59Z' },
        'instant',
        serviceSays({ instant: -1000 }, 'instant'),
      ],
      [
        'declared-input without its source',
        { cause: 'declared-input' },
        'source_id',
        serviceSays({ cause: 'declared-input' }, 'sourceId'),
      ],
      ['a seed on a drift message', { seed_id: 'seed-1' }, 'seed_id', serviceSays({ seedId: 'seed-1' }, 'seedId')],
      // Shapes are the schema's: a type, a required field, a time format, an unknown field.
      ['headline not a string', { headline: 7 }, 'headline', ''],
      [
        'instant that does not exist',
        { instant: '2026-02-30T00:00:00Z' },
        'instant',
        `Not a valid ${INSTANT_SPELLING}.`,
      ],
      ['unknown field', { secret: 'x' }, '(body)', ''],
    ];
    for (const [name, overrides, field, detail] of cases) {
      const res = await api.post(
        '/api/messages',
        { ...BODY, ...overrides },
        { headers: { 'idempotency-key': `k-${name.replaceAll(' ', '-')}` } },
      );
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['body', field]],
        name,
      );
      if (detail) assert.equal(res.body.errors[0].detail, detail, name);
    }
    const missing = await api.post('/api/messages', { cause: 'drift' });
    assert.deepEqual(missing.body.errors.map((e: any) => e.field).sort(), ['headline', 'subject']);
    assert.equal(await count('messages'), 0);
    const keys = await t.deps.db.selectFrom('api_idempotency').select('key').execute();
    assert.deepEqual(keys, [], 'a refused request keeps no key, so it can be retried with it');
    const retried = await api.post('/api/messages', BODY, { headers: { 'idempotency-key': 'k-unknown-cause' } });
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
  });

  test('the API takes exactly the instants `svc emit --instant` takes, and stores the same time', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const spellings = [
      '2026-01-15T12:00:00Z',
      '2026-01-15t12:00:00z',
      '2026-01-15T12:00Z',
      '2026-01-15T13:00:00.5+01:00',
      '2026-01-15T12:00:00.123456789Z',
      '2026-01-15T12:00:00.1234567890Z',
      '2026-02-30T00:00:00Z',
      '2026-01-15T12:00:00',
      '2026-01-15T12:00:00+0100',
      ' 2026-01-15T12:00:00Z',
      '2026-01-15',
    ];
    const flags = [
      '--cause',
      'drift',
      '--subject-kind',
      'service',
      '--subject-key',
      'payments-api',
      '--headline',
      'The service moved.',
    ];
    for (const spelling of spellings) {
      const cli = parseEmitArgs([...flags, '--instant', spelling], 0);
      const res = await api.post('/api/messages', { ...BODY, instant: spelling });
      assert.equal(
        res.status,
        cli.ok ? 201 : 422,
        `${JSON.stringify(spelling)}: the CLI ${cli.ok ? 'takes' : 'refuses'} it`,
      );
      if (cli.ok) assert.equal(Date.parse(res.body.instant), cli.input.instant, spelling);
      else
        assert.deepEqual(
          res.body.errors.map((e: any) => [e.field, e.detail]),
          [['instant', `Not a valid ${INSTANT_SPELLING}.`]],
          spelling,
        );
    }
  });

  test('viewers’ tokens and read-only tokens may not emit', async () => {
    const viewer = await buildApiUser(t, 'viewer');
    assertProblem(await viewer.api.post('/api/messages', BODY), 403, 'admin-only');
    const readOnly = await buildApiUser(t, 'admin', { readOnly: true });
    assertProblem(await readOnly.api.post('/api/messages', BODY), 403, 'read-only-token');
    assertProblem(
      await viewer.api.post('/api/messages', BODY, {
        raw: 'cause=drift',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      403,
      'admin-only',
    );
    assert.equal(await count('messages'), 0);
  });

  test('past the gate, the emit route still refuses a viewer’s token: the same 403 admin-only, nothing stored', async () => {
    const viewer = await buildApiUser(t, 'viewer');
    const gated = await viewer.api.post('/api/messages', BODY);
    assertProblem(gated, 403, 'admin-only');
    // The JSON API alone, with the viewer's account as the gate would have handed it over had a later change let it
    // through (the gate passes the token's account to the lazily loaded API app in the request's bindings).
    const api = createApi(t.deps);
    const apiAccount = {
      id: viewer.account.id,
      username: viewer.account.username,
      role: 'admin' as const, // a stale or forged role: the act reads the account's row
      tokenId: 'token-id',
      readOnly: false,
    };
    for (const headers of [{}, { 'idempotency-key': 'k-1' }] as Record<string, string>[]) {
      const init = {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(BODY),
      };
      const res = await api.request('/api/messages', init, { apiAccount });
      assert.equal(res.status, 403);
      const body = await res.json();
      assert.equal(body.type, gated.body.type);
      assert.equal(body.detail, NOT_ADMIN.words);
      assert.equal(body.detail, gated.body.detail, 'the words the gate says');
    }
    assert.equal(await count('messages'), 0);
    const keys = await t.deps.db
      .selectFrom('api_idempotency')
      .select('key')
      .where('account_id', '=', viewer.account.id)
      .execute();
    assert.deepEqual(keys, [], 'no key kept');
  });

  test('the same Idempotency-Key and body replay the first answer and store nothing; another body is refused; keys are per account', async () => {
    const { account, api } = await buildApiUser(t, 'admin');
    await buildChannel(t, { createdBy: account.id });
    await buildChannel(t, { createdBy: account.id });
    const key = { 'idempotency-key': 'order-4711' };
    const first = await api.post('/api/messages', BODY, { headers: key });
    assert.equal(first.status, 201);
    t.clock.advance(60 * 60 * 1000); // an hour later: the instant (absent) would now differ, but the request is the same
    // The same fields in another order and spacing.
    const raw = `{ "headline" : "The service moved.",\n  "subject": {"key": "payments-api", "kind": "service"}, "cause": "drift" }`;
    const again = await api.request('POST', '/api/messages', undefined, {
      raw,
      headers: { ...key, 'content-type': 'application/json' },
    });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('location'), first.headers.get('location'));
    assert.equal(again.text, first.text, 'byte for byte the first answer');
    assert.equal(await count('messages'), 1);
    assert.equal(await count('deliveries'), 2, 'one delivery per channel');

    const other = await api.post('/api/messages', { ...BODY, headline: 'Something else.' }, { headers: key });
    assertProblem(other, 422, 'idempotency-key-reused');
    assert.equal(await count('messages'), 1);

    const colleague = await buildApiUser(t, 'admin');
    const theirs = await colleague.api.post(
      '/api/messages',
      { ...BODY, headline: 'Something else.' },
      { headers: key },
    );
    assert.equal(theirs.status, 201, 'another account’s key never collides');
    assert.notEqual(theirs.body.id, first.body.id);
    assert.equal((await api.post('/api/messages', BODY)).status, 201, 'without a key every request stores a message');
    assert.equal(await count('messages'), 3);

    for (const bad of ['', 'has space', 'x'.repeat(256), 'tab\there']) {
      const res = await api.post('/api/messages', BODY, { headers: { 'idempotency-key': bad } });
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.in, e.field]),
        [['header', 'idempotency-key']],
        JSON.stringify(bad),
      );
    }
    assert.equal(
      (await api.post('/api/messages', BODY, { headers: { 'idempotency-key': '~'.repeat(255) } })).status,
      201,
    );
    assert.equal(await count('messages'), 4);
  });

  test('requests racing with one key store exactly one message; the others replay it or are refused', async () => {
    const { account, api } = await buildApiUser(t, 'admin');
    await buildChannel(t, { createdBy: account.id });
    const key = { 'idempotency-key': 'race-1' };
    const same = await Promise.all([1, 2, 3, 4].map(() => api.post('/api/messages', BODY, { headers: key })));
    assert.deepEqual(
      same.map((r) => r.status),
      [201, 201, 201, 201],
    );
    assert.equal(same.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 3);
    assert.equal(new Set(same.map((r) => r.body.id)).size, 1);
    assert.equal(await count('messages'), 1);
    assert.equal(await count('deliveries'), 1);

    const mixed = await Promise.all([
      api.post('/api/messages', { ...BODY, headline: 'A' }, { headers: { 'idempotency-key': 'race-2' } }),
      api.post('/api/messages', { ...BODY, headline: 'B' }, { headers: { 'idempotency-key': 'race-2' } }),
    ]);
    assert.deepEqual(mixed.map((r) => r.status).sort(), [201, 422]);
    assert.equal(await count('messages'), 2);
  });

  test('a key holds its answer for 24 hours; after that the same request stores a new message, and housekeeping prunes it', async () => {
    const { api, account } = await buildApiUser(t, 'admin');
    const key = { 'idempotency-key': 'daily-report' };
    const first = await api.post('/api/messages', BODY, { headers: key });
    t.clock.advance(IDEMPOTENCY_TTL_MS - 1);
    const replay = await api.post('/api/messages', BODY, { headers: key });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.id, first.body.id);
    t.clock.advance(1);
    const fresh = await api.post('/api/messages', BODY, { headers: key });
    assert.equal(fresh.status, 201);
    assert.equal(fresh.headers.get('idempotent-replayed'), null);
    assert.notEqual(fresh.body.id, first.body.id);
    assert.equal(await count('messages'), 2);
    assert.equal(
      (await api.post('/api/messages', BODY, { headers: key })).body.id,
      fresh.body.id,
      'the key now holds the new answer',
    );

    const rows = () =>
      t.deps.db
        .selectFrom('api_idempotency')
        .select('key')
        .where('account_id', '=', account.id)
        .orderBy('key')
        .execute();
    t.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    await api.post('/api/messages', BODY, { headers: { 'idempotency-key': 'younger' } });
    t.clock.advance(1000);
    await housekeepOnce(t.deps);
    assert.deepEqual(await rows(), [{ key: 'younger' }], 'the 24-hour-old key is gone, the younger one kept');
  });
});

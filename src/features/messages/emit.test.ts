import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect, type TestDatabase } from '../../../test/helpers/db.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';
import { buildChannel, clearOutbox } from '../../../test/helpers/outbox.ts';
import { CLI_ACTOR } from '../auth/admin-actor.ts';
import { emit, messageLink, type EmitInput } from './emit.service.ts';

const base: EmitInput = {
  cause: 'drift',
  subject: { kind: 'service', key: 'api.example.com:443' },
  instant: Date.UTC(2026, 0, 15, 11, 0, 0),
  headline: 'api.example.com:443 now answers with a different certificate.',
};

// Counts committed deliveries on a connection of its own, as a woken worker would see them. On SQLite the count is
// taken synchronously, so it shows exactly what was committed when the subscriber ran.
async function committedDeliveries(
  tdb: TestDatabase,
): Promise<{ count(): number | Promise<number>; close(): Promise<void> }> {
  if (tdb.database.kind === 'sqlite') {
    const file = new SQLite(tdb.database.path, { readonly: true });
    const statement = file.prepare<[], { n: number }>('select count(*) as n from deliveries');
    return { count: () => statement.get()!.n, close: async () => void file.close() };
  }
  const client = new pg.Client({ connectionString: tdb.database.url });
  await client.connect();
  return {
    count: async () => Number((await client.query<{ n: string }>('select count(*) as n from deliveries')).rows[0]!.n),
    close: () => client.end(),
  };
}

forEachDialect((getDb) => {
  let t: TestApp;
  let authorId: string;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
    authorId = (await buildAccount(t, { role: 'admin' })).id;
  });

  async function messageCount() {
    return (await t.deps.db.selectFrom('messages').select('id').execute()).length;
  }

  test('the body has exactly the documented fields, serialized once, in the stored bytes', async () => {
    const result = await emit(t.deps, CLI_ACTOR, {
      cause: 'declared-input',
      subject: { kind: 'zone', key: 'example.com' },
      instant: Date.UTC(2026, 0, 15, 11, 0, 0, 250),
      headline: 'Zone example.com gained 3 records — "café" <ok> & done.',
      census: 3,
      sourceId: 'src/1',
    });
    assert.ok(result.ok);
    const row = await t.deps.db
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', result.id)
      .executeTakeFirstOrThrow();
    const expected =
      `{"message":"${result.id}","class":"coverage","cause":"declared-input","subject":{"kind":"zone","key":"example.com"},` +
      `"instant":"2026-01-15T11:00:00.250Z","headline":"Zone example.com gained 3 records — \\"café\\" <ok> & done.",` +
      `"census":3,"link":"https://svc.example.test/sources/src%2F1"}`;
    assert.equal(row.body, expected);
    assert.equal(JSON.parse(row.body).headline, row.headline, 'the store and the body carry the same headline');
    assert.deepEqual(
      {
        class: row.class,
        cause: row.cause,
        kind: row.subject_kind,
        key: row.subject_key,
        census: row.census,
        link: row.link,
        created_at: row.created_at,
      },
      {
        class: 'coverage',
        cause: 'declared-input',
        kind: 'zone',
        key: 'example.com',
        census: 3,
        link: 'https://svc.example.test/sources/src%2F1',
        created_at: t.clock.now(),
      },
    );
  });

  test('census and link are omitted when absent (no SVC_PUBLIC_URL)', async () => {
    const noUrl = buildTestApp(getDb(), { publicUrl: undefined });
    const result = await emit(noUrl.deps, CLI_ACTOR, base);
    assert.ok(result.ok);
    const row = await t.deps.db
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', result.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(Object.keys(JSON.parse(row.body)), [
      'message',
      'class',
      'cause',
      'subject',
      'instant',
      'headline',
    ]);
    assert.equal(row.link, null);
    assert.equal(row.census, null);
  });

  test('a census of zero is kept', async () => {
    const result = await emit(t.deps, CLI_ACTOR, { ...base, census: 0 });
    assert.ok(result.ok);
    const row = await t.deps.db
      .selectFrom('messages')
      .select('body')
      .where('id', '=', result.id)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(row.body).census, 0);
  });

  test('each cause maps to its class and links to its own target', async () => {
    const cases: [Partial<EmitInput>, string, string][] = [
      [{ cause: 'drift' }, 'drift', 'https://svc.example.test/subjects/service/api.example.com%3A443'],
      [{ cause: 'threshold' }, 'clock', 'https://svc.example.test/subjects/service/api.example.com%3A443'],
      [{ cause: 'aperture', seedId: 'seed 7' }, 'coverage', 'https://svc.example.test/seeds/seed%207'],
      [{ cause: 'declared-input', sourceId: 'abc' }, 'coverage', 'https://svc.example.test/sources/abc'],
    ];
    for (const [over, cls, link] of cases) {
      const result = await emit(t.deps, CLI_ACTOR, { ...base, ...over });
      assert.ok(result.ok, JSON.stringify(over));
      assert.equal(result.class, cls);
      const body = JSON.parse(
        (await t.deps.db.selectFrom('messages').select('body').where('id', '=', result.id).executeTakeFirstOrThrow())
          .body,
      );
      assert.equal(body.class, cls);
      assert.equal(body.cause, over.cause);
      assert.equal(body.link, link);
      assert.deepEqual(body.subject, base.subject);
    }
  });

  test('link segments are URL-encoded and the public URL may carry a path', () => {
    const target = { cause: 'drift' as const, subject: { kind: 'host/name', key: 'a b?c#d%e/é' } };
    assert.equal(
      messageLink('https://x.example/svc', target),
      'https://x.example/svc/subjects/host%2Fname/a%20b%3Fc%23d%25e%2F%C3%A9',
    );
    assert.equal(messageLink(undefined, target), undefined);
  });

  test('routes to every enabled channel whose classes include the class, and only those', async () => {
    const driftOnly = await buildChannel(t, { createdBy: authorId, classes: 'drift' });
    const coverageDrift = await buildChannel(t, { createdBy: authorId, classes: 'coverage,drift' });
    await buildChannel(t, { createdBy: authorId, classes: 'drift', enabled: false });
    const clock = await buildChannel(t, { createdBy: authorId, classes: 'clock' });
    const routed = async (input: EmitInput) => {
      const result = await emit(t.deps, CLI_ACTOR, input);
      assert.ok(result.ok);
      const rows = await t.deps.db.selectFrom('deliveries').selectAll().where('message_id', '=', result.id).execute();
      for (const d of rows) {
        assert.deepEqual([d.state, d.attempts, d.next_attempt_at, d.lease_owner], ['pending', 0, t.clock.now(), null]);
      }
      assert.equal(result.deliveries, rows.length);
      return rows.map((d) => d.channel_id).sort();
    };
    assert.deepEqual(await routed(base), [driftOnly.id, coverageDrift.id].sort());
    assert.deepEqual(await routed({ ...base, cause: 'threshold' }), [clock.id]);
    assert.deepEqual(await routed({ ...base, cause: 'aperture', seedId: 's1' }), [coverageDrift.id]);
    await t.deps.db.deleteFrom('channels').execute();
    assert.deepEqual(await routed(base), [], 'with no channels the message is stored and sent nowhere');
  });

  test('invalid input is refused with a clear error and stores nothing', async () => {
    const cases: [Partial<EmitInput> & Record<string, unknown>, string, RegExp][] = [
      [{ cause: 'weather' }, 'cause', /one of drift, aperture, declared-input, threshold/],
      [{ cause: 'Drift' }, 'cause', /one of/],
      [{ headline: '' }, 'headline', /required/],
      [{ headline: '   ' }, 'headline', /required/],
      [{ headline: 'line\nbreak' }, 'headline', /control characters/],
      [{ headline: 'x'.repeat(1001) }, 'headline', /at most 1000/],
      [{ census: -1 }, 'census', /zero or more/],
      [{ census: 1.5 }, 'census', /whole number/],
      [{ census: Number.NaN }, 'census', /whole number/],
      [{ instant: Number.NaN }, 'instant', /valid time/],
      [{ instant: -5 }, 'instant', /valid time/],
      [{ instant: 1.5 }, 'instant', /valid time/],
      [{ instant: Date.UTC(10000, 0, 1) }, 'instant', /valid time/],
      [{ subject: { kind: '', key: 'k' } }, 'subjectKind', /required/],
      [{ subject: { kind: 'service', key: '' } }, 'subjectKey', /required/],
      [{ subject: { kind: 'service', key: '..' } }, 'subjectKey', /"\." or "\.\."/],
      [{ subject: { kind: 'service', key: '\ud800' } }, 'subjectKey', /not valid Unicode/],
      [{ cause: 'declared-input' }, 'sourceId', /Source id/],
      [{ cause: 'aperture' }, 'seedId', /Seed id/],
      [{ cause: 'drift', seedId: 'x' }, 'seedId', /only given for the aperture cause/],
      [{ cause: 'threshold', sourceId: 'x' }, 'sourceId', /only given for the declared-input cause/],
    ];
    for (const [over, field, message] of cases) {
      const result = await emit(t.deps, CLI_ACTOR, { ...base, ...over } as EmitInput);
      assert.equal(result.ok, false, JSON.stringify(over));
      assert.ok(!result.ok && result.reason === 'invalid', JSON.stringify(result));
      assert.match((result.errors as Record<string, string>)[field] ?? '', message, JSON.stringify(over));
    }
    assert.equal(await messageCount(), 0);
    assert.equal((await t.deps.db.selectFrom('deliveries').select('id').execute()).length, 0);
  });

  test('10,000 enabled channels get one pending delivery each from one emit', async () => {
    const now = t.clock.now();
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      id: `bulk-${i}`,
      url: `https://hooks.example.com/${i}`,
      secret: null,
      classes: i % 2 === 0 ? 'drift' : 'clock,drift',
      enabled: 1,
      consecutive_failures: 0,
      last_error: null,
      last_error_at: null,
      last_success_at: null,
      created_at: now,
      updated_at: now,
      created_by: authorId,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await t.deps.db
        .insertInto('channels')
        .values(rows.slice(i, i + 500))
        .execute();
    const result = await emit(t.deps, CLI_ACTOR, base);
    assert.ok(result.ok);
    assert.equal(result.deliveries, 10_000);
    const n = await t.deps.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('message_id', '=', result.id)
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 10_000);
  });

  test("emit wakes this process's workers once, after the commit, when it queued deliveries", async () => {
    await buildChannel(t, { createdBy: authorId, classes: 'drift' });
    await buildChannel(t, { createdBy: authorId, classes: 'drift,clock' });
    const committed = await committedDeliveries(getDb());
    const seen: (number | Promise<number>)[] = [];
    const unsubscribe = t.deps.wakeup.subscribe(() => seen.push(committed.count()));
    try {
      const first = await emit(t.deps, CLI_ACTOR, base);
      assert.ok(first.ok);
      assert.equal(first.deliveries, 2);
      assert.deepEqual(await Promise.all(seen), [2], 'woken once, with both deliveries already committed');
      const second = await emit(t.deps, CLI_ACTOR, { ...base, cause: 'threshold' });
      assert.ok(second.ok);
      assert.deepEqual(await Promise.all(seen), [2, 3]);
    } finally {
      unsubscribe();
      await committed.close();
    }
  });

  test('an emit that stores nothing, queues nothing or fails wakes nobody', async () => {
    let woken = 0;
    const unsubscribe = t.deps.wakeup.subscribe(() => woken++);
    try {
      assert.equal((await emit(t.deps, CLI_ACTOR, { ...base, headline: '' })).ok, false);
      assert.ok((await emit(t.deps, CLI_ACTOR, base)).ok, 'no channel: stored, nothing to deliver');
      assert.equal(woken, 0);
      await buildChannel(t, { createdBy: authorId, classes: 'drift' });
      // The same message id twice: the second transaction fails and rolls back.
      const fixed = { ...t.deps, random: { bytes: (n: number) => Buffer.alloc(n, 9) } };
      assert.ok((await emit(fixed, CLI_ACTOR, base)).ok);
      assert.equal(woken, 1);
      await assert.rejects(emit(fixed, CLI_ACTOR, base));
      assert.equal(woken, 1);
    } finally {
      unsubscribe();
    }
  });
});

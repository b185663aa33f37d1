import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ColumnNode, UpdateQueryNode, ValueNode, type KyselyPlugin } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { attemptsOf } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { claimDue, recordVerdict, type Verdict } from './delivery.service.ts';

const ok: Verdict = { kind: 'delivered', status: 200, excerpt: null };
const failed = (status: number | null, error: string, excerpt: string | null = null): Verdict => ({
  kind: 'failed',
  status,
  error,
  excerpt,
});
// Claimed deliveries are never POSTed here: the URLs only have to be valid.
const url = (path: string) => `http://127.0.0.1:9${path}`;

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
  });
  const delivery = (id: string) =>
    t.deps.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const attempts = (id: string) => attemptsOf(t.deps.db, id);
  const channel = (id: string) =>
    t.deps.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** Claims what is due for `owner` as a worker with `busy` attempts in flight (none by default) would. */
  const claim = (owner: string, slots: number, perChannel = slots, busy = new Map<string, number>()) =>
    claimDue(t.deps, owner, { slots, perChannel, busy, leaseMs: 60_000 });

  test("verdicts keep the channel's counters in order: a success ends the streak, failures after it count; no lease, no record", async () => {
    const ch = await buildChannel(t.deps.db, { url: url('/streak') });
    for (let i = 0; i < 4; i++)
      await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const now = t.clock.now();
    const jobs = await claim('w1', 4);
    assert.equal(jobs.length, 4);
    for (const [i, verdict] of [failed(500, 'HTTP 500'), ok, failed(500, 'HTTP 500')].entries())
      assert.equal(await recordVerdict(t.deps, 'w1', jobs[i]!, verdict, now, 3), true);
    let c = await channel(ch.id);
    assert.deepEqual([c.consecutive_failures, c.last_error, c.last_success_at], [1, 'HTTP 500', now]);
    t.clock.advance(5000);
    assert.equal(await recordVerdict(t.deps, 'w1', jobs[3]!, ok, now, 3), true);
    c = await channel(ch.id);
    assert.deepEqual([c.consecutive_failures, c.last_success_at], [0, t.clock.now()]);
    assert.equal(await recordVerdict(t.deps, 'someone-else', jobs[0]!, ok, now, 3), false, 'no lease, no record');
    assert.equal((await attemptsOf(t.deps.db)).length, 4);
  });

  test('a claim honours the per-channel cap, counting what the worker has in flight, and leases each due row to one owner only', async () => {
    const [a, b, c] = [
      await buildChannel(t.deps.db, { url: url('/a') }),
      await buildChannel(t.deps.db, { url: url('/b') }),
      await buildChannel(t.deps.db, { url: url('/c') }),
    ];
    for (let i = 0; i < 3; i++)
      await buildMessageWithDeliveries(t.deps.db, { channelIds: [a!.id, b!.id, c!.id], now: t.clock.now() });
    const now = t.clock.now();
    // w1 already has two attempts in flight to a (its cap) and one to b.
    const first = await claim(
      'w1',
      10,
      2,
      new Map([
        [a!.id, 2],
        [b!.id, 1],
      ]),
    );
    const count = (jobs: { channel_id: string }[], id: string) => jobs.filter((j) => j.channel_id === id).length;
    assert.deepEqual([count(first, a!.id), count(first, b!.id), count(first, c!.id)], [0, 1, 2]);
    assert.ok(
      first.every((j) => j.url.endsWith(j.channel_id === b!.id ? '/b' : '/c') && j.body.length > 0 && j.attempts === 0),
    );
    const second = await claim('w2', 10, 4);
    assert.deepEqual([count(second, a!.id), count(second, b!.id), count(second, c!.id)], [3, 2, 1]);
    assert.equal(new Set([...first, ...second].map((j) => j.id)).size, 9, 'no row leased twice');
    assert.deepEqual(await claim('w3', 10, 4), []);
    const leased = await t.deps.db.selectFrom('deliveries').select(['id', 'lease_owner', 'lease_until']).execute();
    const owners = new Map<string, string>([
      ...first.map((j) => [j.id, 'w1'] as const),
      ...second.map((j) => [j.id, 'w2'] as const),
    ]);
    assert.ok(leased.every((d) => d.lease_owner === owners.get(d.id) && d.lease_until === now + 60_000));
  });

  test('claims racing each other (PostgreSQL: on separate connections at once) lease every due row to exactly one owner', async () => {
    const channels = [
      await buildChannel(t.deps.db, { url: url('/r1') }),
      await buildChannel(t.deps.db, { url: url('/r2') }),
      await buildChannel(t.deps.db, { url: url('/r3') }),
    ];
    for (let i = 0; i < 10; i++)
      await buildMessageWithDeliveries(t.deps.db, { channelIds: channels.map((c) => c.id), now: t.clock.now() - i });
    const owners = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
    const rounds = await Promise.all(owners.map((owner) => claim(owner, 4, 2)));
    const taken = rounds.flatMap((jobs, i) => jobs.map((j) => ({ id: j.id, owner: owners[i]! })));
    assert.equal(new Set(taken.map((j) => j.id)).size, taken.length, 'no row leased twice');
    assert.ok(
      rounds.every((jobs) => channels.every((c) => jobs.filter((j) => j.channel_id === c.id).length <= 2)),
      'each claim within its cap',
    );
    const rows = await t.deps.db.selectFrom('deliveries').select(['id', 'lease_owner']).execute();
    const ownerOf = new Map(taken.map((j) => [j.id, j.owner]));
    assert.ok(
      rows.every((r) => r.lease_owner === (ownerOf.get(r.id) ?? null)),
      'a row is leased to the claim that returned it, and only then',
    );
    const rest = await claim('w7', 30);
    assert.equal(
      taken.length + rest.length,
      30,
      'what the racing claims left (or gave back over their caps) is still due',
    );
  });

  test('a give-back that fails still returns what the claim kept; the rows over the cap wait for their lease to run out', async () => {
    const ch = await buildChannel(t.deps.db, { url: url('/giveback') });
    for (let i = 0; i < 3; i++)
      await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - i });
    // The database refuses the give-back (an UPDATE setting lease_owner to null), as during an outage.
    const refuseGiveBack: KyselyPlugin = {
      transformQuery({ node }) {
        if (
          UpdateQueryNode.is(node) &&
          node.updates?.some(
            (u) =>
              ColumnNode.is(u.column) &&
              u.column.column.name === 'lease_owner' &&
              ValueNode.is(u.value) &&
              u.value.value === null,
          )
        ) {
          throw new Error('database unavailable');
        }
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const kept = await claimDue({ ...t.deps, db: t.deps.db.withPlugin(refuseGiveBack) }, 'w1', {
      slots: 3,
      perChannel: 1,
      busy: new Map(),
      leaseMs: 60_000,
    });
    assert.equal(kept.length, 1, 'the one within the cap is returned, to be attempted now');
    assert.ok(
      t.logs.some(
        (l) =>
          l.includes('could not give back deliveries over the per-channel cap') && l.includes('database unavailable'),
      ),
    );
    const rows = await t.deps.db.selectFrom('deliveries').select(['id', 'lease_owner']).execute();
    assert.ok(
      rows.every((r) => r.lease_owner === 'w1'),
      'all three stay leased: the kept one and the two over the cap',
    );
    assert.deepEqual(await claim('w2', 3), [], 'nobody else takes them while the lease holds');
    t.clock.advance(60_001);
    assert.deepEqual(
      (await claim('w2', 3)).map((j) => j.id).sort(),
      rows.map((r) => r.id).sort(),
      'due again once it ran out',
    );
  });

  test('a claim returns the oldest due deliveries, oldest first (the order the worker starts them in)', async () => {
    const channels = [
      await buildChannel(t.deps.db, { url: url('/o1') }),
      await buildChannel(t.deps.db, { url: url('/o2') }),
    ];
    const due = new Map<string, number>();
    // Created in an order unrelated to their due times.
    for (const offset of [7, 2, 9, 4, 1, 8, 3, 6, 5, 10]) {
      const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
        channelIds: channels.map((c) => c.id),
        now: t.clock.now() - 100 * offset,
      });
      for (const id of deliveryIds.values()) due.set(id, t.clock.now() - 100 * offset);
    }
    const jobs = await claim('w1', 12, 20);
    const times = jobs.map((j) => due.get(j.id)!);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      'oldest first',
    );
    assert.deepEqual(times, [...due.values()].sort((a, b) => a - b).slice(0, 12), 'and the twelve oldest');
  });

  test("each verdict closes its delivery, writes its attempt row and moves its channel's counters; the fifth failure dead-letters", async () => {
    const failing = await buildChannel(t.deps.db, { url: url('/failing') });
    const healthy = await buildChannel(t.deps.db, { url: url('/healthy') });
    await t.deps.db.updateTable('channels').set({ consecutive_failures: 3 }).where('id', '=', failing.id).execute();
    const first = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [failing.id, healthy.id],
      now: t.clock.now(),
    });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [failing.id], now: t.clock.now() + 1 });
    await t.deps.db
      .updateTable('deliveries')
      .set({ attempts: 4 })
      .where('id', '=', first.deliveryIds.get(failing.id)!)
      .execute();
    t.clock.advance(10);
    const now = t.clock.now();
    const jobs = await claim('w1', 10, 4);
    assert.equal(jobs.length, 3);
    const verdicts = jobs.map((job) =>
      job.channel_id === healthy.id
        ? ({ kind: 'delivered', status: 204, excerpt: null } as const)
        : job.attempts === 4
          ? failed(503, 'HTTP 503', 'busy')
          : failed(null, 'connection refused'),
    );
    for (const [i, job] of jobs.entries())
      assert.equal(await recordVerdict(t.deps, 'w1', job, verdicts[i]!, now - 5, 5), true);
    const lastFailure = verdicts.filter((v) => v.kind === 'failed').at(-1) as { error: string };
    const f = await channel(failing.id);
    assert.deepEqual(
      [f.consecutive_failures, f.last_error, f.last_error_at, f.last_success_at],
      [5, lastFailure.error, now, null],
    );
    const h = await channel(healthy.id);
    assert.deepEqual([h.consecutive_failures, h.last_success_at, h.last_error], [0, now, null]);
    for (const [i, job] of jobs.entries()) {
      const d = await delivery(job.id);
      const [row, ...more] = await attempts(job.id);
      const v = verdicts[i]!;
      assert.equal(more.length, 0);
      assert.deepEqual(row, {
        delivery_id: job.id,
        attempt_no: job.attempts + 1,
        started_at: now - 5,
        duration_ms: 5,
        verdict: v.kind,
        status_code: v.status,
        error: v.kind === 'failed' ? v.error : null,
        response_excerpt: v.excerpt,
      });
      assert.equal(d.attempts, job.attempts + 1);
      assert.deepEqual([d.lease_owner, d.lease_until], [null, null]);
      if (job.channel_id === healthy.id)
        assert.deepEqual([d.state, d.delivered_at, d.last_error], ['delivered', now, null]);
      else if (job.attempts === 4)
        assert.deepEqual([d.state, d.next_attempt_at, d.last_error], ['dead', now, 'HTTP 503']);
      else {
        assert.deepEqual([d.state, d.delivered_at, d.last_error], ['pending', null, 'connection refused']);
        assert.ok(d.next_attempt_at > now);
      }
    }
  });

  test('each attempt is a row of its own, with its start, duration, verdict, status, error and excerpt stored as given', async () => {
    const ch = await buildChannel(t.deps.db, { url: url('/rows') });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() });
    const id = deliveryIds.get(ch.id)!;
    const odd = 'HTTP 418 "teapot", \\ ] } [ { ✓ <b>&amp;</b>';
    const verdicts = [
      failed(418, odd, `${odd} ☕`),
      failed(null, 'connection refused'),
      { kind: 'delivered', status: 204, excerpt: null } as const,
    ];
    const expected: unknown[] = [];
    for (const [n, verdict] of verdicts.entries()) {
      const startedAt = t.clock.now();
      const [job, ...more] = await claim('w1', 5);
      assert.equal(more.length, 0);
      assert.equal(job!.attempts, n);
      t.clock.advance(7);
      assert.equal(await recordVerdict(t.deps, 'w1', job!, verdict, startedAt, 6.6), true);
      expected.push({
        delivery_id: id,
        attempt_no: n + 1,
        started_at: startedAt,
        duration_ms: 7,
        verdict: verdict.kind,
        status_code: verdict.status,
        error: verdict.kind === 'failed' ? verdict.error : null,
        response_excerpt: verdict.excerpt,
      });
      t.clock.t = (await delivery(id)).next_attempt_at;
    }
    assert.deepEqual(await attemptsOf(t.deps.db, id), expected);
    assert.deepEqual([(await delivery(id)).state, (await delivery(id)).attempts], ['delivered', 3]);
  });
});

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signedInAs } from '../../../test/helpers/factories.ts';
import { attemptsOf } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { markRead } from './read-state.service.ts';
import { DEFAULT_RETENTION_DAYS, pruneMessages, retentionDays, setRetentionDays } from './retention.service.ts';
import { CLI_ACTOR } from '../auth/admin-actor.ts';

const DAY = 24 * 60 * 60 * 1000;

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  const ids = async () => (await t.deps.db.selectFrom('messages').select('id').execute()).map((r) => r.id).sort();

  test('messages and their delivery records are kept for the retention, 90 days by default', async () => {
    assert.equal(await retentionDays(t.deps), DEFAULT_RETENTION_DAYS);
    assert.equal(DEFAULT_RETENTION_DAYS, 90);
    const author = await buildAccount(t, { role: 'admin' });
    await buildChannel(t, { createdBy: author.id });
    const old = await buildMessage(t);
    await t.deps.db.updateTable('deliveries').set({ state: 'delivered' }).where('message_id', '=', old).execute();
    await markRead(t.deps, author.id, [old]);
    t.clock.advance(60 * DAY);
    const recent = await buildMessage(t);
    t.clock.advance(30 * DAY);
    assert.equal(await pruneMessages(t.deps), 0, 'exactly 90 days old is still kept');
    t.clock.advance(1);
    assert.equal(await pruneMessages(t.deps), 1);
    assert.deepEqual(await ids(), [recent].sort());
    assert.equal(
      (await t.deps.db.selectFrom('deliveries').select('id').where('message_id', '=', old).execute()).length,
      0,
    );
    assert.equal(
      (await t.deps.db.selectFrom('message_reads').select('message_id').where('message_id', '=', old).execute()).length,
      0,
    );
  });

  test("a pruned message's delivery attempts go with it; a kept message keeps its own", async () => {
    await buildChannel(t);
    await buildChannel(t);
    const old = await buildMessage(t);
    t.clock.advance(50 * DAY);
    const recent = await buildMessage(t);
    const deliveries = await t.deps.db.selectFrom('deliveries').select(['id', 'message_id']).execute();
    assert.equal(deliveries.length, 4);
    for (const d of deliveries) {
      for (const attempt_no of [1, 2]) {
        const verdict = attempt_no === 2 ? 'delivered' : 'failed';
        await t.deps.db
          .insertInto('delivery_attempts')
          .values({
            delivery_id: d.id,
            attempt_no,
            started_at: t.clock.now(),
            duration_ms: 3,
            verdict,
            status_code: verdict === 'failed' ? 500 : 204,
            error: verdict === 'failed' ? 'HTTP 500' : null,
            response_excerpt: 'ok',
          })
          .execute();
      }
    }
    await t.deps.db.updateTable('deliveries').set({ state: 'delivered' }).execute();
    t.clock.advance(41 * DAY);
    assert.equal(await pruneMessages(t.deps), 1);
    assert.deepEqual(await ids(), [recent]);
    const kept = new Set(deliveries.filter((d) => d.message_id === recent).map((d) => d.id));
    const left = await attemptsOf(t.deps.db);
    assert.equal(left.length, 4, "two attempts of each of the kept message's two deliveries");
    assert.ok(
      left.every((a) => kept.has(a.delivery_id)),
      `no attempt of ${old} is left`,
    );
  });

  test('pruning never removes a message that still has a pending delivery', async () => {
    const author = await buildAccount(t, { role: 'admin' });
    await buildChannel(t, { createdBy: author.id });
    await buildChannel(t, { createdBy: author.id });
    const waiting = await buildMessage(t);
    const rows = await t.deps.db.selectFrom('deliveries').select('id').where('message_id', '=', waiting).execute();
    await t.deps.db.updateTable('deliveries').set({ state: 'dead' }).where('id', '=', rows[0]!.id).execute();
    t.clock.advance(400 * DAY);
    assert.equal(await pruneMessages(t.deps), 0);
    assert.deepEqual(await ids(), [waiting]);
    await t.deps.db.updateTable('deliveries').set({ state: 'delivered' }).where('id', '=', rows[1]!.id).execute();
    assert.equal(await pruneMessages(t.deps), 1);
    assert.deepEqual(await ids(), []);
  });

  test('the dial changes what is kept; out-of-range values are refused', async () => {
    assert.deepEqual(await setRetentionDays(t.deps, CLI_ACTOR, 0), { ok: false, reason: 'out-of-range' });
    assert.deepEqual(await setRetentionDays(t.deps, CLI_ACTOR, 3651), { ok: false, reason: 'out-of-range' });
    assert.deepEqual(await setRetentionDays(t.deps, CLI_ACTOR, 7), { ok: true });
    const gone = await buildMessage(t);
    t.clock.advance(5 * DAY);
    const kept = await buildMessage(t);
    t.clock.advance(3 * DAY);
    assert.equal(await pruneMessages(t.deps), 1);
    assert.deepEqual(await ids(), [kept]);
    assert.notEqual(gone, kept);
  });

  test('a large backlog is pruned in batches', async () => {
    const rows = Array.from({ length: 1234 }, (_, i) => ({
      id: `old-${i}`,
      class: 'drift' as const,
      cause: 'drift' as const,
      subject_kind: 'service',
      subject_key: `s${i}`,
      instant: 0,
      headline: 'Old.',
      census: null,
      link: null,
      body: '{}',
      created_at: t.clock.now() - 100 * DAY - i,
    }));
    for (let i = 0; i < rows.length; i += 300)
      await t.deps.db
        .insertInto('messages')
        .values(rows.slice(i, i + 300))
        .execute();
    assert.equal(await pruneMessages(t.deps), 1234);
    assert.deepEqual(await ids(), []);
  });

  test('the retention dial is on the channels tab, admin only', async () => {
    const admin = await signedInAs(t, 'admin');
    const viewer = await signedInAs(t, 'viewer');
    const tab = await admin.client.get('/settings?tab=channels');
    assert.match(tab.text, /kept for <strong>90<\/strong> days/);
    assert.equal((await viewer.client.post('/settings/channels/retention', { days: '1' })).status, 403);
    assert.equal(await retentionDays(t.deps), 90);
    for (const days of ['0', '-4', 'ten', '3651', '1.5', '']) {
      const res = await admin.client.post('/settings/channels/retention', { days });
      assert.equal(res.status, 400, days);
      assert.match(res.text, /whole number of days from 1 to 3650/);
    }
    const ok = await admin.client.post('/settings/channels/retention', { days: '30' });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/settings?tab=channels&notice=retention-saved');
    assert.equal(await retentionDays(t.deps), 30);
    assert.match((await admin.client.get(ok.location!)).text, /kept for <strong>30<\/strong> days/);
  });
});

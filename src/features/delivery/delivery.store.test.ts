import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, test } from 'node:test';
import { promisify } from 'node:util';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { attemptsOf, clearOutbox, until } from '../../../test/helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries } from '../../../test/helpers/outbox-factories.ts';
import type { ClaimParams } from './delivery.repo.ts';
import { attemptRecords } from './delivery.service.ts';
import { openDeliveryStore, type DeliveryStore } from './delivery.store.ts';

const execFileAsync = promisify(execFile);

forEachDialect((getDb, dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    t = buildTestApp(getDb());
  });

  const claim = (owner: string, limit: number): ClaimParams => {
    const now = t.clock.now();
    return { owner, now, leaseUntil: now + 60_000, limit, perChannel: 10, exclude: [], quotas: new Map(), window: 2 * limit };
  };

  // SQLite: the worker's own thread (the default) and the caller's connection; PostgreSQL: the worker's own session.
  for (const thread of dialect === 'sqlite' ? [true, false] : [true]) {
    test(`records verdicts and claims the next deliveries atomically${dialect === 'sqlite' ? (thread ? ', on its own thread' : ', on the caller’s connection') : ''}`, async () => {
      const ch = await buildChannel(t.deps.db, { url: 'http://127.0.0.1:9/store' });
      for (let i = 0; i < 3; i++) await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 10 + i });
      const store: DeliveryStore = openDeliveryStore(t.deps, { thread });
      try {
        const expected = dialect === 'postgres' ? 'session' : thread ? 'thread' : 'event loop';
        await until(() => store.runsOn === expected);
        const first = await store.recordAndClaim([], 'w1', t.clock.now(), claim('w1', 2));
        assert.equal(first.recorded, 0);
        assert.equal(first.jobs.length, 2, 'the two oldest');
        assert.ok(first.jobs.every((j) => j.url === ch.url && j.body.length > 0 && j.attempts === 0));
        const leased = await t.deps.db.selectFrom('deliveries').select(['id', 'lease_owner']).where('lease_owner', '=', 'w1').execute();
        assert.deepEqual(leased.map((r) => r.id).sort(), first.jobs.map((j) => j.id).sort(), 'the leases are committed where every connection sees them');

        // One verdict of each kind, and the next claim in the same transaction.
        const now = t.clock.now();
        const records = attemptRecords(
          [
            { job: first.jobs[0]!, verdict: { kind: 'delivered', status: 200 }, startedAt: now },
            { job: first.jobs[1]!, verdict: { kind: 'failed', status: 503, error: 'HTTP 503' }, startedAt: now },
          ],
          now,
          t.deps.random,
        );
        const second = await store.recordAndClaim(records, 'w1', now, claim('w1', 5));
        assert.equal(second.recorded, 2);
        assert.equal(second.jobs.length, 1, 'the failed one is not due again yet; the third is');
        const rows = await t.deps.db.selectFrom('deliveries').select(['id', 'state', 'attempts', 'lease_owner']).execute();
        const byId = new Map(rows.map((r) => [r.id, r]));
        assert.deepEqual(byId.get(first.jobs[0]!.id), { id: first.jobs[0]!.id, state: 'delivered', attempts: 1, lease_owner: null });
        assert.deepEqual(byId.get(first.jobs[1]!.id), { id: first.jobs[1]!.id, state: 'pending', attempts: 1, lease_owner: null });
        assert.equal(byId.get(second.jobs[0]!.id)!.lease_owner, 'w1');
        assert.equal((await attemptsOf(t.deps.db)).length, 2);

        // A verdict for a delivery the owner no longer holds is not recorded.
        const stale = attemptRecords([{ job: second.jobs[0]!, verdict: { kind: 'delivered', status: 200 }, startedAt: now }], now, t.deps.random);
        assert.equal((await store.recordAndClaim(stale, 'someone-else', now)).recorded, 0);
      } finally {
        await store.close();
      }
    });
  }

  if (dialect === 'sqlite') {
    test('an idle store never keeps the process alive, before or after its thread is ready', async () => {
      const database = getDb().database;
      assert.equal(database.kind, 'sqlite');
      const store = new URL('./delivery.store.ts', import.meta.url).href;
      for (const waitForThread of [false, true]) {
        // A process that opens a store, never uses or closes it, and then has nothing left to do.
        const script: string = `
          import { openDeliveryStore } from ${JSON.stringify(store)};
          const store = openDeliveryStore({ dialect: 'sqlite', log: { error() {} }, config: { database: ${JSON.stringify(database)} } });
          const deadline = Date.now() + 20_000;
          const report = () => process.stdout.write(store.runsOn + '\\n');
          if (${waitForThread}) (function poll() { store.runsOn === 'thread' || Date.now() > deadline ? report() : setTimeout(poll, 5); })();
          else report();`;
        const { stdout }: { stdout: string } = await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
        assert.equal(stdout.trim(), waitForThread ? 'thread' : 'event loop', 'the process exited by itself');
      }
    });

    test('a store thread that cannot open its database costs speed, not deliveries: requests run on the event loop', async () => {
      const ch = await buildChannel(t.deps.db, { url: 'http://127.0.0.1:9/store' });
      await buildMessageWithDeliveries(t.deps.db, { channelIds: [ch.id], now: t.clock.now() - 1 });
      // The thread is given a file under a regular file, so its open fails; requests go to deps.db meanwhile.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-'));
      const blocker = path.join(dir, 'not-a-directory');
      fs.writeFileSync(blocker, '');
      const store = openDeliveryStore({ ...t.deps, config: { ...t.deps.config, database: { kind: 'sqlite', path: path.join(blocker, 'svc.sqlite') } } });
      try {
        await until(() => t.logs.some((line) => line.includes('delivery store thread stopped')));
        assert.equal(store.runsOn, 'event loop');
        const { jobs } = await store.recordAndClaim([], 'w1', t.clock.now(), claim('w1', 5));
        assert.equal(jobs.length, 1, 'claimed on the event loop');
      } finally {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeEach, test } from 'node:test';
import { forEachDialect } from '../../test/helpers/db.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../test/helpers/outbox.ts';
import { useReceiver, type Receiver } from '../../test/helpers/receiver.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

forEachDialect((getDb) => {
  let rx: Receiver;
  const receiver = useReceiver();
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    rx = receiver();
  });

  /**
   * Runs `svc <args>` against the test database until it logs `ready`, then SIGTERMs it; returns its exit code and log.
   */
  async function runUntil(args: string[], ready: (log: string) => boolean) {
    const db = getDb().database;
    const proc = spawn(process.execPath, [bin, ...args], {
      env: {
        ...process.env,
        DATABASE_URL: db.kind === 'sqlite' ? db.path : db.url,
        PORT: '0',
        HOST: '127.0.0.1',
        SVC_LOG_LEVEL: 'info',
        NODE_NO_WARNINGS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    proc.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    const exit = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!ready(log)) {
      if (Date.now() > deadline) throw new Error(`not ready; log:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    proc.kill('SIGTERM');
    return { code: await exit, log };
  }

  for (const args of [['worker'], ['serve']]) {
    test(`svc ${args.join(' ')} delivers pending deliveries and stops gracefully on SIGTERM`, async () => {
      const ch = await buildChannel(getDb().db, { url: `${rx.url}/cli-${args[0]}` });
      for (let i = 0; i < 3; i++)
        await buildMessageWithDeliveries(getDb().db, { channelIds: [ch.id], now: Date.now() });
      const { code, log } = await runUntil(args, () => rx.received.length >= 3);
      assert.equal(code, 0, log);
      assert.equal(rx.received.length, 3);
      const rows = await getDb().db.selectFrom('deliveries').select(['state', 'lease_owner']).execute();
      assert.ok(
        rows.every((r) => r.state === 'delivered' && r.lease_owner === null),
        'recorded before exiting',
      );
      assert.doesNotMatch(log, /\b(HTTP 5\d\d|connection refused)\b/);
    });
  }

  test('svc serve --no-worker leaves deliveries to a separate worker', async () => {
    const ch = await buildChannel(getDb().db, { url: `${rx.url}/no-worker` });
    await buildMessageWithDeliveries(getDb().db, { channelIds: [ch.id], now: Date.now() });
    const result = await runUntil(['serve', '--no-worker'], (log) => /svc listening/.test(log));
    assert.equal(result.code, 0);
    assert.match(result.log, /"worker":false/);
    assert.equal((await runUntil(['worker'], () => rx.received.length >= 1)).code, 0);
    assert.deepEqual(
      rx.received.map((r) => r.path),
      ['/no-worker'],
    );
  });
});

import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../../test/helpers/db.ts';
import { until } from '../../../test/helpers/delivery.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';
import { buildChannel, clearOutbox } from '../../../test/helpers/outbox.ts';
import { CLI_ACTOR } from '../auth/admin-actor.ts';
import { emit, type EmitInput } from '../messages/emit.service.ts';
import { LISTENER_APPLICATION_NAME, startDeliveryListener, wireWakeups } from './wakeup.listener.ts';
import { notifyDeliveriesDue } from '../messages/deliveries-due.ts';
import { createDeliveryWakeup } from './wakeup.ts';

const input: EmitInput = {
  cause: 'drift',
  subject: { kind: 'service', key: 'api.example.com' },
  instant: Date.UTC(2026, 0, 15, 11),
  headline: 'It moved.',
};
const SECRET = 'listener-secret-pw';

function capturedLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

test('wake() calls every subscriber; unsubscribed ones no more; a throwing one neither escapes nor stops the rest', () => {
  const errors: unknown[] = [];
  const wakeup = createDeliveryWakeup((err) => errors.push(err));
  const calls: string[] = [];
  const offA = wakeup.subscribe(() => calls.push('a'));
  wakeup.subscribe(() => {
    throw new Error('subscriber bug');
  });
  wakeup.subscribe(() => calls.push('c'));
  wakeup.wake();
  assert.deepEqual(calls, ['a', 'c']);
  assert.equal(errors.length, 1);
  offA();
  wakeup.wake();
  assert.deepEqual(calls, ['a', 'c', 'c']);
  assert.doesNotThrow(() => createDeliveryWakeup().wake(), 'no subscribers: nothing happens');
});

// A "database" that accepts and closes every connection at once, counting them.
async function hangUpServer(): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `postgres://svc:${SECRET}@127.0.0.1:${port}/svc`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('a listener whose server hangs up logs the outage once, without the password, and keeps retrying until closed', async () => {
  const server = await hangUpServer();
  const { log, lines } = capturedLog();
  const calls: unknown[] = [];
  const listener = startDeliveryListener({
    url: server.url,
    log,
    onNotify: (payload) => calls.push(payload),
    firstRetryMs: 5,
    maxRetryMs: 20,
  });
  try {
    await until(() => server.connections() >= 4);
  } finally {
    await listener.close();
    await server.close();
  }
  assert.equal(lines.filter((l) => /listener disconnected/.test(l)).length, 1, lines.join(''));
  assert.match(lines[0]!, /"level":40/);
  assert.match(lines[0]!, /127\.0\.0\.1/);
  assert.doesNotMatch(lines.join(''), new RegExp(SECRET));
  assert.deepEqual(calls, [], 'never connected, never called');
});

for (const dialect of dialects()) {
  describe(dialect, () => {
    let tdb: TestDatabase;
    let t: TestApp;
    let authorId: string;
    before(async () => {
      tdb = await createTestDatabase(dialect);
      t = buildTestApp(tdb);
      await clearOutbox(t);
      authorId = (await buildAccount(t, { role: 'admin' })).id;
      await buildChannel(t, { createdBy: authorId });
    });
    after(async () => {
      await tdb.drop();
    });

    test('notifyDeliveriesDue runs inside a transaction on either database', async () => {
      await tdb.db.transaction().execute((trx) => notifyDeliveriesDue(trx, dialect));
    });

    test('a listener hears emits committed on another connection, never rolled-back ones, and reconnects by itself', {
      skip: dialect !== 'postgres',
    }, async () => {
      const database = tdb.database;
      assert.equal(database.kind, 'postgres');
      // A password in the URL (trust auth ignores it) must never reach a log line.
      const url = new URL(database.kind === 'postgres' ? database.url : '');
      url.password = SECRET;
      const { log, lines } = capturedLog();
      const heard: (string | undefined)[] = [];
      const listener = startDeliveryListener({
        url: url.href,
        log,
        onNotify: (payload) => heard.push(payload),
        firstRetryMs: 50,
      });
      const count = (payload: string | undefined) => heard.filter((p) => p === payload).length;
      try {
        await until(() => count(undefined) === 1); // connected and caught up once
        assert.ok((await emit(t.deps, CLI_ACTOR, input)).ok);
        await until(() => count('') === 1);

        // The same message id twice: the second emit fails and notifies nobody.
        const fixed = { ...t.deps, random: { bytes: (n: number) => Buffer.alloc(n, 7) } };
        assert.ok((await emit(fixed, CLI_ACTOR, input)).ok);
        await until(() => count('') === 2);
        await assert.rejects(emit(fixed, CLI_ACTOR, input));
        // A transaction that fails after notifying takes the notification with it.
        const rollback = new Error('rolled back');
        await assert.rejects(
          tdb.db.transaction().execute(async (trx) => {
            await notifyDeliveriesDue(trx, dialect);
            throw rollback;
          }),
          rollback,
        );
        // Notifications arrive in commit order: had a failed one notified, its '' would come before the marker.
        await sql`select pg_notify('svc_deliveries_due', 'marker')`.execute(tdb.db);
        await until(() => heard.includes('marker'));
        assert.deepEqual(heard, [undefined, '', '', 'marker']);

        const killed = await sql<{ pid: number }>`
          select pg_terminate_backend(pid) as pid from pg_stat_activity
          where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(tdb.db);
        assert.equal(killed.rows.length, 1, 'one listening session');
        await until(() => count(undefined) === 2); // reconnected and caught up
        assert.ok((await emit(t.deps, CLI_ACTOR, input)).ok);
        await until(() => count('') === 3);

        assert.equal(lines.filter((l) => /listener disconnected/.test(l)).length, 1);
        assert.ok(lines.some((l) => /connected again/.test(l)));
        assert.doesNotMatch(lines.join(''), new RegExp(SECRET));
      } finally {
        await listener.close();
      }
      const sessions = async () =>
        (
          await sql`select pid from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(
            tdb.db,
          )
        ).rows.length;
      await until(async () => (await sessions()) === 0);
    });

    test('wireWakeups wakes a worker on every wake-up of this process and, on PostgreSQL, on every NOTIFY, until stopped', async () => {
      let woken = 0;
      const stop = wireWakeups(t.deps, { wake: () => woken++ });
      try {
        if (dialect === 'postgres') await until(() => woken === 1); // the catch-up after connecting
        const before = woken;
        t.deps.wakeup.wake(); // as emit() does after its commit
        assert.equal(woken, before + 1, 'woken in-process at once');
        if (dialect === 'postgres') {
          await sql`select pg_notify('svc_deliveries_due', '')`.execute(tdb.db); // as another process's emit does
          await until(() => woken === before + 2);
        }
      } finally {
        await stop();
      }
      const after = woken;
      t.deps.wakeup.wake();
      assert.equal(woken, after, 'unsubscribed');
    });

    test('wireWakeups listens on SVC_DATABASE_LISTEN_URL when set', { skip: dialect !== 'postgres' }, async () => {
      const server = await hangUpServer();
      const database = tdb.database.kind === 'postgres' ? { ...tdb.database, listenUrl: server.url } : tdb.database;
      const other = buildTestApp(tdb, { database });
      const stop = wireWakeups(other.deps, { wake: () => {} });
      try {
        await until(() => server.connections() >= 1);
      } finally {
        await stop();
        await server.close();
      }
      assert.doesNotMatch(other.logs.join(''), new RegExp(SECRET));
    });
  });
}

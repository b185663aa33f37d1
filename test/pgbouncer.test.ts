// svc behind a transaction-mode pooler (PgBouncer): migrations, sign-in and pages, emit and delivery all work when
// every transaction may land on a different server connection. Runs when TEST_DATABASE_URL is set and Debian's
// pgbouncer is installed; PgBouncer refuses session settings in the startup packet and keeps no named statement across
// transactions, so a regression to either fails here.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createDeliveryWorker } from '../src/features/delivery/delivery.worker.ts';
import { buildTestApp } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { attemptsOf, until } from './helpers/delivery.ts';
import { buildAccount, signIn } from './helpers/factories.ts';
import { buildChannel, buildMessage } from './helpers/outbox.ts';
import { useReceiver } from './helpers/receiver.ts';

const PGBOUNCER = '/usr/sbin/pgbouncer';
const skip = !process.env.TEST_DATABASE_URL
  ? 'PostgreSQL only (set TEST_DATABASE_URL)'
  : !fs.existsSync(PGBOUNCER)
    ? `PgBouncer not installed at ${PGBOUNCER} (apt-get install pgbouncer)`
    : undefined;

/** A free TCP port on 127.0.0.1 (bound once, then released for PgBouncer). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts PgBouncer in transaction mode with two server connections for `dbName`; resolves once it accepts connections.
 */
async function startPgBouncer(
  dbName: string,
  upstream: URL,
): Promise<{ url: string; proc: ChildProcess; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pgbouncer-'));
  fs.chmodSync(dir, 0o777); // PgBouncer refuses to run as root; it runs as postgres and writes its pid here
  const port = await freePort();
  const user = decodeURIComponent(upstream.username || 'postgres');
  fs.writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`);
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${dbName} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${dbName}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      // Few server connections, so consecutive transactions of one client land on different ones.
      'default_pool_size = 2',
      'max_client_conn = 200',
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const args = [path.join(dir, 'pgbouncer.ini')];
  if (process.getuid?.() === 0) args.unshift('-u', 'postgres');
  const proc = spawn(PGBOUNCER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c) => (stderr += String(c)));
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      }),
    { limitMs: 10_000, everyMs: 50 },
  ).catch(() => {
    throw new Error(`PgBouncer did not start: ${stderr}`);
  });
  const url = new URL(upstream.href);
  url.host = `127.0.0.1:${port}`;
  url.pathname = `/${dbName}`;
  return { url: url.href, proc, dir };
}

describe('behind PgBouncer in transaction mode', { skip }, () => {
  let direct: TestDatabase;
  let pooled: TestDatabase;
  let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
  const receiver = useReceiver();

  before(async () => {
    direct = await createTestDatabase('postgres', { migrate: false });
    if (direct.database.kind !== 'postgres') throw new Error('a PostgreSQL test database was asked for');
    const upstream = new URL(direct.database.url);
    bouncer = await startPgBouncer(upstream.pathname.slice(1), upstream);
    const database = { kind: 'postgres', url: bouncer.url } as const;
    pooled = { ...(await openDatabase(database)), database, drop: async () => undefined };
    const migrated = await migrateToLatest(pooled.db);
    if (!migrated.ok) throw migrated.error;
  });

  after(async () => {
    await pooled?.db.destroy();
    bouncer?.proc.kill('SIGTERM');
    if (bouncer) fs.rmSync(bouncer.dir, { recursive: true, force: true });
    await direct?.drop();
  });

  test('sign-in, pages, emit and delivery all work through the pooler', async () => {
    const t = buildTestApp(pooled);
    const admin = await buildAccount(t, { role: 'admin' });
    const client = await signIn(t, admin);
    for (const page of ['/', '/inbox', '/settings', '/profile'])
      assert.equal((await client.get(page)).status, 200, page);

    const rx = receiver();
    const channel = await buildChannel(t, { url: `${rx.url}/pooled`, secret: 'pooled-secret' });
    const ids = await Promise.all(Array.from({ length: 12 }, () => buildMessage(t)));
    const worker = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 3000 } });
    try {
      await worker.drain();
    } finally {
      await worker.stop(0);
    }
    assert.equal(rx.received.filter((r) => r.path === '/pooled').length, ids.length, 'every message delivered once');
    const attempts = await attemptsOf(pooled.db);
    assert.equal(attempts.length, ids.length);
    assert.ok(attempts.every((a) => a.verdict === 'delivered' && a.status_code === 200));
    const row = await pooled.db
      .selectFrom('channels')
      .select(['consecutive_failures', 'last_success_at'])
      .where('id', '=', channel.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.consecutive_failures, 0);
    assert.notEqual(row.last_success_at, null);
    // The message page reads deliveries and attempts through the pooler too.
    assert.equal((await client.get(`/messages/${ids[0]}`)).status, 200);
  });

  test('concurrent requests share two server connections without mixing their transactions', async () => {
    const t = buildTestApp(pooled);
    const accounts = await Promise.all(Array.from({ length: 6 }, () => buildAccount(t)));
    const clients = await Promise.all(accounts.map((a) => signIn(t, a)));
    const pages = await Promise.all(clients.flatMap((c) => [c.get('/'), c.get('/inbox'), c.get('/profile')]));
    assert.ok(pages.every((p) => p.status === 200));
    for (const [i, c] of clients.entries()) assert.match((await c.get('/')).text, new RegExp(accounts[i]!.username));
  });
});

// Graceful shutdown of `svc serve`, in a child process: a SIGTERM lets the request and the delivery in flight finish,
// refuses new connections, leaves nothing leased and exits 0; a second signal exits at once.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { beforeEach, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { until } from '../../test/helpers/delivery.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../test/helpers/outbox.ts';
import { useReceiver, type Receiver } from '../../test/helpers/receiver.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** A running `svc serve` child: its port once listening, everything it logged, and its exit. */
interface Child {
  proc: ChildProcess;
  log: () => string;
  port: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

forEachDialect((getDb) => {
  let rx: Receiver;
  const receiver = useReceiver();
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    rx = receiver();
  });

  async function startServe(): Promise<Child> {
    const db = getDb().database;
    const proc = spawn(process.execPath, [bin, 'serve'], {
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
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('close', (code, signal) => resolve({ code, signal })),
    );
    await until(() => /svc listening/.test(log) || proc.exitCode !== null, { limitMs: 60_000 });
    const port = Number(/"port":(\d+)/.exec(log)?.[1]);
    assert.ok(port > 0, log);
    return { proc, log: () => log, port, exit };
  }

  test('SIGTERM: the request and the delivery in flight finish, new connections are refused, nothing stays leased, exit 0', async () => {
    rx.answer = () => ({ status: 200, delayMs: 1_500 });
    const channel = await buildChannel(getDb().db, { url: `${rx.url}/slow` });
    await buildMessageWithDeliveries(getDb().db, { channelIds: [channel.id], now: Date.now() });
    const child = await startServe();
    try {
      await until(() => rx.received.length === 1); // the slow receiver holds the POST for 1.5 s

      // A sign-in whose body is still arriving: in flight until its last bytes come.
      const body = 'username=nobody-here&password=not-the-password';
      const socket = net.connect(child.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString()));
      socket.write(
        `POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );

      child.proc.kill('SIGTERM');
      await until(() => /shutting down/.test(child.log()));
      const refused = await fetch(`http://127.0.0.1:${child.port}/healthz`).then(
        () => 'answered',
        (err: { cause?: { code?: string } }) => err.cause?.code,
      );
      assert.equal(refused, 'ECONNREFUSED', 'no new connections once stopping');

      socket.write(body.slice(10));
      await until(() => answer.includes('</html>'));
      assert.match(answer, /^HTTP\/1\.1 401 /, 'the request in flight got its full answer');
      assert.match(answer, /Incorrect username or password\./);

      assert.deepEqual(await child.exit, { code: 0, signal: null }, child.log());
      const rows = await getDb().db.selectFrom('deliveries').select(['state', 'attempts', 'lease_owner']).execute();
      assert.deepEqual(
        rows,
        [{ state: 'delivered', attempts: 1, lease_owner: null }],
        'the slow POST was finished and recorded',
      );
    } finally {
      child.proc.kill('SIGKILL');
    }
  });

  test('a second signal while stopping exits at once, non-zero', async () => {
    rx.answer = () => 'hang'; // a delivery that would hold the graceful stop for its whole 10 s budget
    const channel = await buildChannel(getDb().db, { url: `${rx.url}/hang` });
    await buildMessageWithDeliveries(getDb().db, { channelIds: [channel.id], now: Date.now() });
    const child = await startServe();
    try {
      await until(() => rx.received.length === 1);
      child.proc.kill('SIGTERM');
      await until(() => /shutting down/.test(child.log()));
      child.proc.kill('SIGINT');
      const { code } = await child.exit;
      assert.equal(code, 130, child.log());
      assert.match(child.log(), /SIGINT received while stopping; exiting now/);
    } finally {
      child.proc.kill('SIGKILL');
    }
  });
});

// Authenticated page throughput (session lookup + role read on every request) against a bare node:http
// server. Each server runs in its own child process; the load generator runs here.
import { fork, type ChildProcess } from 'node:child_process';
import { load, report } from './helpers.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const server = new URL('./servers/auth-page.ts', import.meta.url).pathname;

/** Starts a bench server child and waits for its ready message. */
function start(kind: string): Promise<{ child: ChildProcess; url: string; cookie?: string }> {
  const child = fork(server, [kind], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { url: string; cookie?: string }) => resolve({ child, ...m }));
    child.once('exit', (code) => reject(new Error(`bench server ${kind} exited with ${code}`)));
  });
}

const kinds = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
// A child left running (the parent failed mid-run) would keep the bench's output open forever.
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
for (const kind of kinds) {
  const bare = await start('bare');
  children.add(bare.child);
  const app = await start(kind);
  children.add(app.child);
  const headers = { cookie: app.cookie! };
  await load(bare.url, { seconds: 1 });
  await load(`${app.url}/`, { seconds: 1, headers });
  const base = await load(bare.url, { seconds: SECONDS });
  const page = await load(`${app.url}/`, { seconds: SECONDS, headers });
  if (page.errors > 0) throw new Error(`authenticated page answered ${page.errors} non-2xx/errors`);
  console.log(`-- ${kind}: GET / as a signed-in viewer vs bare node:http hello world, 10 connections, ${SECONDS} s each`);
  report('requests/s', page.rps, base.rps, 'req/s');
  report('p99 latency', page.p99, base.p99, 'ms', false);
  for (const s of [bare, app]) {
    const exited = new Promise((r) => s.child.once('exit', r));
    s.child.kill('SIGTERM');
    await exited;
    children.delete(s.child);
  }
}

// A signed-in page (GET /) while 50 parallel clients POST wrong passwords to /login for ever new usernames, beside the
// same page without the flood: once from one address (one attacker), once from ever new addresses (a botnet, which
// no address lock stops). A real `svc serve` process on SQLite (the built JavaScript);
// the flood comes from a child process; the page is timed here, one request after another on each of 2 connections
// (undici, sub-millisecond timing: autocannon rounds latencies to whole milliseconds).
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool, request } from 'undici';
import { ascending, firstAnswer, freePort, killOnExit, percentile, report, spawnSvc } from './helpers.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5) * 2;
const SETUP_TOKEN = 'bench-setup-token-0123456789';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };

async function signIn(base: string): Promise<string> {
  const credentials = 'username=bench-admin&password=bench-password-1';
  const setup = await fetch(`${base}/setup`, {
    method: 'POST',
    headers: FORM,
    body: `token=${SETUP_TOKEN}&${credentials}`,
    redirect: 'manual',
  });
  if (setup.status !== 303) throw new Error(`setup answered ${setup.status}`);
  const login = await fetch(`${base}/login`, { method: 'POST', headers: FORM, body: credentials, redirect: 'manual' });
  let cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (login.status !== 303 || !cookie) throw new Error(`login answered ${login.status}`);
  // The first sign-in offers second-factor enrolment; the bench skips it.
  const enrol = await (await fetch(`${base}/login/enrol`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(enrol)?.[1] ?? '';
  const skipped = await fetch(`${base}/login/enrol`, {
    method: 'POST',
    headers: { ...FORM, cookie },
    body: `action=skip&_csrf=${encodeURIComponent(csrf)}`,
    redirect: 'manual',
  });
  const renewed = skipped.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (renewed) cookie = renewed;
  const page = await fetch(`${base}/`, { headers: { cookie }, redirect: 'manual' });
  if (page.status !== 200) throw new Error(`the signed-in page answered ${page.status}`);
  return cookie;
}

async function page(base: string, cookie: string): Promise<{ p50: number; p99: number; rps: number; bad: number }> {
  const pool = new Pool(base, { connections: 2 });
  const times: number[] = [];
  let bad = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    [0, 1].map(async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await request(`${base}/`, { dispatcher: pool, headers: { cookie } });
        await res.body.text();
        times.push(performance.now() - t0);
        if (res.statusCode !== 200) bad++;
      }
    }),
  );
  await pool.close();
  const sorted = ascending(times);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), rps: times.length / SECONDS, bad };
}

type FloodFigures = { requests: number; seconds: number; statuses: Record<string, number>; errors: number };

/** Times the page while a login-flood child (bench/servers/login-flood.ts) runs in `mode`. */
async function underFlood(
  base: string,
  cookie: string,
  mode: string,
): Promise<{ page: Awaited<ReturnType<typeof page>>; flood: FloodFigures }> {
  const flood = fork(new URL('./servers/login-flood.ts', import.meta.url).pathname, [base, mode], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  killOnExit(flood);
  const done = new Promise<FloodFigures>((resolve) =>
    flood.on('message', (m: { started?: boolean }) => {
      if (!m.started) resolve(m as FloodFigures);
    }),
  );
  await new Promise((r) => setTimeout(r, 2_000)); // the flood reaches its full rate
  const loud = await page(base, cookie);
  flood.kill('SIGTERM');
  return { page: loud, flood: await done };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-flood-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnSvc(['serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: path.join(dir, 'svc.sqlite'),
    SVC_SETUP_TOKEN: SETUP_TOKEN,
    SVC_TRUSTED_PROXIES: '127.0.0.1',
    SVC_LOG_LEVEL: 'warn',
  });
  server.stdout!.resume();
  server.stderr!.resume();
  try {
    await firstAnswer(`${base}/login`, server);
    const cookie = await signIn(base);
    await page(base, cookie); // warm-up
    const quiet = await page(base, cookie);
    const results = [];
    for (const mode of ['one-address', 'many-addresses'] as const)
      results.push({ mode, ...(await underFlood(base, cookie, mode)) });
    if (quiet.bad + results.reduce((n, r) => n + r.page.bad, 0) > 0)
      throw new Error('the signed-in page failed under the flood');
    console.log(
      `GET / signed in (2 connections, ${SECONDS} s) while 50 clients send wrong passwords for new usernames, vs without; svc serve on SQLite`,
    );
    for (const { mode, page: loud, flood: f } of results) {
      console.log(
        `-- the flood from ${mode === 'one-address' ? 'one address' : 'a new address per attempt'}: ${(f.requests / f.seconds).toFixed(0)} sign-in attempts/s (${f.statuses['4xx']} 4xx, ${f.statuses['5xx']} 5xx, ${f.errors} errors)`,
      );
      report('page p50 under the flood', loud.p50, 'ms', { value: quiet.p50, label: 'without' });
      report(
        'page p99 under the flood',
        loud.p99,
        'ms',
        { value: quiet.p99, label: 'without' },
        { max: 2 * quiet.p99 },
      );
      report('page requests/s under the flood', loud.rps, '/s', { value: quiet.rps, label: 'without' });
    }
  } finally {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();

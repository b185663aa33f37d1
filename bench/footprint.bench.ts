// Footprint of `svc serve` (node bin/svc.js serve, the built JavaScript) beside a bare node:http server, each measured
// the same way in its own process:
//   cold start  spawn until the first answered HTTP request, on a fresh SQLite file (median of 3 starts)
//   idle RSS    after start-up and one request, once the resident set has settled (V8 frees start-up garbage late)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ascending,
  firstAnswer,
  freePort,
  percentile,
  report,
  rssMb,
  settledRssMb,
  spawnSvc,
  killOnExit,
} from './helpers.ts';
import { spawn, type ChildProcess } from 'node:child_process';

const STARTS = 3;
const BARE = new URL('./servers/bare-http.mjs', import.meta.url).pathname;

type Started = { child: ChildProcess; url: string; coldMs: number; cleanup: () => void };

async function startSvc(): Promise<Started> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-footprint-'));
  const port = await freePort();
  const t0 = performance.now();
  const child = spawnSvc(['serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: path.join(dir, 'svc.sqlite'),
    SVC_LOG_LEVEL: 'warn',
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const url = `http://127.0.0.1:${port}/login`;
  const coldMs = (await firstAnswer(url, child)) - t0;
  return { child, url, coldMs, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

async function startBare(): Promise<Started> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [BARE], {
    env: { ...process.env, NODE_OPTIONS: '', PORT: String(port) },
    stdio: 'ignore',
  });
  killOnExit(child);
  const url = `http://127.0.0.1:${port}/`;
  const coldMs = (await firstAnswer(url, child)) - t0;
  return { child, url, coldMs, cleanup: () => {} };
}

async function stop(s: Started): Promise<void> {
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
  s.cleanup();
}

async function main(): Promise<void> {
  const cold = { svc: [] as number[], bare: [] as number[] };
  // Alternated, so a busy moment of the machine hits both alike.
  for (let i = 0; i < STARTS; i++) {
    for (const [name, start] of [
      ['bare', startBare],
      ['svc', startSvc],
    ] as const) {
      const s = await start();
      cold[name].push(s.coldMs);
      await stop(s);
    }
  }
  const idle: Record<'svc' | 'bare', number> = { svc: 0, bare: 0 };
  let justAfter = 0;
  for (const [name, start] of [
    ['bare', startBare],
    ['svc', startSvc],
  ] as const) {
    const s = await start(); // firstAnswer made its one request
    if (name === 'svc') justAfter = rssMb(s.child.pid!);
    idle[name] = await settledRssMb(s.child.pid!);
    await stop(s);
  }
  console.log(`svc serve (node bin/svc.js serve, SQLite) vs a bare node:http server, each in its own process`);
  report(
    `cold start, spawn to first answer (median of ${STARTS})`,
    percentile(ascending(cold.svc), 50),
    'ms',
    { value: percentile(ascending(cold.bare), 50), label: 'bare' },
    { max: 1000 },
  );
  report('idle RSS after one request, settled', idle.svc, 'MB', { value: idle.bare, label: 'bare' }, { max: 100 });
  console.log(
    `  (svc's RSS right after its first answer, before V8 returned start-up garbage: ${justAfter.toFixed(0)} MB)`,
  );
}

await main();

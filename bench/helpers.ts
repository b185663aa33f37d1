// Shared bench pieces: percentiles, the report line (figure, baseline, budget), the receiver child, bench deps, and
// child processes of the built `svc` (bin/svc.js runs dist/, which bench/run.mjs builds first).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';
import { systemClock, systemRandom, type Deps } from '../src/deps.ts';
import { createDeliveryWakeup } from '../src/features/delivery/wakeup.ts';
import { testConfig } from '../test/helpers/app.ts';
import type { TestDatabase } from '../test/helpers/db.ts';

/** bin/svc.js, as operators run it. */
export const SVC_BIN = new URL('../bin/svc.js', import.meta.url).pathname;

/** The p-th percentile (nearest rank) of ascending `sorted`. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Sorts a copy ascending. */
export function ascending(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Prints one figure beside its same-run baseline and, when there is one, its budget and whether it is met. */
export function report(
  name: string,
  value: number,
  unit: string,
  baseline?: { value: number; label: string },
  budget?: { max?: number; min?: number },
): void {
  const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)).padStart(8);
  let line = `  ${name.padEnd(46)} ${fmt(value)} ${unit.padEnd(4)}`;
  if (baseline) line += `   ${baseline.label} ${fmt(baseline.value).trim()} ${unit}`;
  if (budget?.max !== undefined)
    line += `   budget <= ${fmt(budget.max).trim()} ${unit}: ${value <= budget.max ? 'met' : 'NOT met'}`;
  if (budget?.min !== undefined)
    line += `   floor >= ${fmt(budget.min).trim()} ${unit}: ${value >= budget.min ? 'met' : 'NOT met'}`;
  console.log(line);
}

/** Dependencies for in-process benches: the real clock and randomness, silent logs, a wake-up line. */
export function benchDeps(tdb: TestDatabase): Deps {
  return {
    db: tdb.db,
    dialect: tdb.dialect,
    config: testConfig(tdb, { logLevel: 'silent' }),
    clock: systemClock,
    random: systemRandom,
    log: pino({ level: 'silent' }),
    wakeup: createDeliveryWakeup(),
  };
}

/** The webhook receiver child (bench/servers/receiver.ts): its base URL, and the arrival times it recorded. */
export interface BenchReceiver {
  url: string;
  /** First arrival (epoch ms, sub-ms precision) per message id of bodies POSTed to /lat paths since the last call. */
  arrivals(): Promise<Map<string, number>>;
  close(): void;
}

/** Starts the receiver in its own process, so its work does not share the worker's event loop. */
export function startReceiver(): Promise<BenchReceiver> {
  const child = fork(new URL('./servers/receiver.ts', import.meta.url).pathname, {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  killOnExit(child);
  return new Promise((resolve, reject) => {
    child.once('message', (m: { url: string }) =>
      resolve({
        url: m.url,
        arrivals: () =>
          new Promise((done) => {
            child.once('message', (a: { arrivals: [string, number][] }) => done(new Map(a.arrivals)));
            child.send({ cmd: 'arrivals' });
          }),
        close: () => child.kill('SIGTERM'),
      }),
    );
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
  });
}

const children = new Set<ChildProcess>();
/** A child left running (the bench failed mid-run) would keep the bench's output open forever. */
export function killOnExit(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Spawns `node bin/svc.js ...args` with `env` added to this environment. */
export function spawnSvc(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [SVC_BIN, ...args], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killOnExit(child);
  return child;
}

/** A TCP port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `url` every 2 ms until any HTTP answer arrives; resolves with the time (performance.now()) of that answer. */
export async function firstAnswer(url: string, child: ChildProcess, limitMs = 30_000): Promise<number> {
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before answering`);
    try {
      const res = await fetch(url, { redirect: 'manual' });
      await res.arrayBuffer();
      return performance.now();
    } catch {
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  throw new Error(`no answer from ${url} within ${limitMs} ms`);
}

/** Resident set size of process `pid` in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

/**
 * RSS once it has settled: V8 returns start-up garbage some seconds after the process goes idle, so this samples each
 * second for at least `minMs` and until the last five samples lie within 1 MB (or `maxMs` has passed).
 */
export async function settledRssMb(pid: number, minMs = 12_000, maxMs = 40_000): Promise<number> {
  const samples: number[] = [];
  const started = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1_000));
    samples.push(rssMb(pid));
    const last = samples.slice(-5);
    const elapsed = performance.now() - started;
    if ((elapsed >= minMs && last.length === 5 && Math.max(...last) - Math.min(...last) < 1) || elapsed >= maxMs)
      return samples.at(-1)!;
  }
}

/** Sleeps until performance.now() reaches `at`. */
export async function until(at: number): Promise<void> {
  const wait = at - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

// Shared bench pieces: a throwaway database, a served app, autocannon runs, and the bare node:http baseline.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';

/** One load run's figures. */
export interface LoadFigures {
  rps: number;
  p99: number;
  errors: number;
}

/** Runs autocannon against url for `seconds` with `connections`, optional headers. */
export async function load(url: string, opts: { seconds?: number; connections?: number; headers?: Record<string, string> } = {}): Promise<LoadFigures> {
  const result = await autocannon({ url, duration: opts.seconds ?? 5, connections: opts.connections ?? 10, headers: opts.headers });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** A bare node:http hello-world server: the baseline every web figure is divided by. */
export async function bareServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => new Promise((r) => server.close(() => r())) };
}

/** Prints one figure beside its baseline with the ratio. */
export function report(name: string, value: number, baseline: number, unit: string, higherIsBetter = true): void {
  // autocannon reports latency in whole milliseconds: a baseline of 0 ms has no meaningful ratio.
  const ratio = baseline > 0 ? (value / baseline).toFixed(2) : 'n/a (baseline under 1 ms)';
  console.log(`${name.padEnd(44)} ${value.toFixed(1).padStart(10)} ${unit.padEnd(6)} baseline ${baseline.toFixed(1).padStart(10)} ${unit.padEnd(6)} ratio ${ratio}${higherIsBetter ? '' : ' (lower is better)'}`);
}

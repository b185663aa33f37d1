// A local webhook receiver on 127.0.0.1 that records every request; its answer per request is programmable.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach } from 'node:test';

/** One request as the receiver saw it. */
export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** How to answer: a status (and optional headers, body and delay before answering), or 'hang' to never answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

/** A running receiver. */
export interface Receiver {
  /** Base URL, e.g. http://127.0.0.1:41234 (or https://hook.test:port for the TLS receiver). */
  url: string;
  port: number;
  received: Received[];
  /** Decides the answer per request; defaults to 200. */
  answer: (req: Received) => Answer;
  /** Requests currently being handled (answered or hanging), by path. */
  inFlight: Map<string, number>;
  /** Highest simultaneous in-flight count seen per path. */
  maxInFlight: Map<string, number>;
  /** Resolves once `n` requests have arrived in total. */
  waitFor(n: number): Promise<void>;
  /** TCP connections accepted, including TLS handshakes that never became requests. */
  connections: number;
  /**
   * Forgets what it saw (requests, connections, in-flight peaks; not what is still in flight) and answers 200 again.
   */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_ANSWER = (): Answer => ({ status: 200, body: 'ok' });

const fixtures = new URL('../fixtures/', import.meta.url);
/** The self-signed certificate of the TLS receiver (valid for the name hook.test). */
export const HOOK_TEST_CERT = fs.readFileSync(new URL('hook-test.cert.pem', fixtures), 'utf8');
const HOOK_TEST_KEY = fs.readFileSync(new URL('hook-test.key.pem', fixtures), 'utf8');

/** Starts a receiver on 127.0.0.1 or ::1 (plain http, or https with the hook.test certificate). */
export async function startReceiver(opts: { tls?: boolean; host?: '127.0.0.1' | '::1' } = {}): Promise<Receiver> {
  const host = opts.host ?? '127.0.0.1';
  const waiters: { n: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    const path = req.url ?? '/';
    r.inFlight.set(path, (r.inFlight.get(path) ?? 0) + 1);
    r.maxInFlight.set(path, Math.max(r.maxInFlight.get(path) ?? 0, r.inFlight.get(path)!));
    const done = () => r.inFlight.set(path, r.inFlight.get(path)! - 1);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: Received = {
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      r.received.push(seen);
      for (const w of [...waiters]) {
        if (r.received.length < w.n) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = r.answer(seen);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => {
          hanging.delete(res);
          done();
        });
        return;
      }
      const reply = () => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? '', done);
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  };
  const server = opts.tls
    ? https.createServer({ cert: HOOK_TEST_CERT, key: HOOK_TEST_KEY }, handler)
    : http.createServer(handler);
  server.on('connection', () => r.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const r: Receiver = {
    url: opts.tls ? `https://hook.test:${port}` : `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    received: [],
    answer: DEFAULT_ANSWER,
    inFlight: new Map(),
    maxInFlight: new Map(),
    connections: 0,
    reset: () => {
      r.received.length = 0;
      r.connections = 0;
      r.maxInFlight.clear();
      r.answer = DEFAULT_ANSWER;
    },
    waitFor: (n) =>
      r.received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return r;
}

/**
 * A receiver for the enclosing suite (or file): started before its tests, reset before each, closed after them.
 * Returns a getter, as the receiver exists only once the suite runs.
 */
export function useReceiver(opts: { tls?: boolean; host?: '127.0.0.1' | '::1' } = {}): () => Receiver {
  let rx: Receiver | undefined;
  before(async () => {
    rx = await startReceiver(opts);
  });
  beforeEach(() => rx?.reset());
  after(async () => {
    await rx?.close();
  });
  return () => {
    if (!rx) throw new Error('receiver not started: call it inside a test or hook');
    return rx;
  };
}

/** A port on 127.0.0.1 with nothing listening (bound once, then released). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

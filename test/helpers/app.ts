// A test instance of the app over a real database: movable clock, captured logs, and a cookie-keeping client.
import { Writable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../../src/app.ts';
import type { Config } from '../../src/config.ts';
import { systemRandom, type Clock, type Deps } from '../../src/deps.ts';
import { createDeliveryWakeup } from '../../src/features/delivery/wakeup.ts';
import type { TestDatabase } from './db.ts';

/** A clock tests move by hand. */
export class TestClock implements Clock {
  constructor(public t = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** The config tests run with unless they override parts of it. */
export function testConfig(tdb: TestDatabase, overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    database: tdb.database,
    setupToken: undefined,
    secureCookies: false,
    externalUrl: undefined,
    publicUrl: 'https://svc.example.test',
    oidcCaFile: undefined,
    logLevel: 'debug',
    logFormat: 'json',
    trustedProxies: [],
    refusedSignInDelayMs: 0,
    ...overrides,
  };
}

/** Everything a test needs to drive the app. */
export interface TestApp {
  deps: Deps;
  clock: TestClock;
  app: ReturnType<typeof createApp>;
  /** Every log line written so far, as raw JSON text. */
  logs: string[];
  client(): TestClient;
}

/** Builds the app over `tdb` with a test clock and captured logs. */
export function buildTestApp(tdb: TestDatabase, overrides: Partial<Config> = {}): TestApp {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const clock = new TestClock();
  const log = pino({ level: 'debug' }, sink);
  const deps: Deps = {
    db: tdb.db,
    dialect: tdb.dialect,
    config: testConfig(tdb, overrides),
    clock,
    random: systemRandom,
    log,
    wakeup: createDeliveryWakeup((err) => log.error({ err }, 'a delivery wake-up subscriber failed')),
  };
  const app = createApp(deps);
  return { deps, clock, app, logs, client: () => new TestClient(app) };
}

const ORIGIN = 'http://localhost';

/** A minimal browser stand-in over app.request(): keeps cookies and the last form token, sends same-origin headers. */
export class TestClient {
  cookies = new Map<string, string>();
  csrf: string | undefined;
  /** The one-time token of the last minting form seen (sent once with the next post, as a browser would). */
  once: string | undefined;
  address = '127.0.0.1';
  userAgent = 'svc-test';

  constructor(private readonly app: TestApp['app']) {}

  async request(path: string, init: RequestInit = {}): Promise<TestResponse> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has('cookie')) {
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    if (!headers.has('user-agent')) headers.set('user-agent', this.userAgent);
    const res = await this.app.request(
      `${ORIGIN}${path}`,
      { ...init, headers },
      { incoming: { socket: { remoteAddress: this.address } } },
    );
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /max-age=0/i.test(a.trim()) || /expires=thu, 01 jan 1970/i.test(a.trim()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token) this.csrf = token[1];
    const once = /name="_once" value="([^"]+)"/.exec(text);
    if (once) this.once = once[1];
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location') ?? undefined };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<TestResponse> {
    return this.request(path, { headers });
  }

  /** Posts a form the way a same-origin browser page would (Origin header, the session's form token). */
  post(
    path: string,
    fields: Record<string, string | string[]> = {},
    headers: Record<string, string> = {},
  ): Promise<TestResponse> {
    const body = new URLSearchParams();
    if (this.csrf && !('_csrf' in fields)) body.append('_csrf', this.csrf);
    if (this.once && !('_once' in fields)) body.append('_once', this.once);
    this.once = undefined;
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    return this.request(path, {
      method: 'POST',
      body: body.toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: ORIGIN,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
    });
  }
}

/** What a test reads back from a response. */
export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | undefined;
}

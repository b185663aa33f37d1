// Inbox page latency with 1,000 and with 1,000,000 messages in the store (SQLite), side by side.
// The inbox page, the bell's unread count and deep pages must cost the same whatever the store's size.
// Run: npm run bench -- inbox
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pino from 'pino';
import { createApp } from '../src/app.ts';
import type { Config } from '../src/config.ts';
import { openDatabase } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock, systemRandom, type Deps } from '../src/deps.ts';
import { createSession } from '../src/features/auth/sessions.service.ts';
import { createDeliveryWakeup } from '../src/features/delivery/wakeup.ts';
import { markRead } from '../src/features/messages/read-state.service.ts';

const SIZES = [1_000, 1_000_000];
const WARMUP = 200;
const ROUNDS = 400;
const SPACING_MS = 7_000; // one message every 7 s: a million spans about 81 days

interface Scenario {
  name: string;
  path: (deps: Deps) => Promise<string>;
}

// A cursor about halfway down the store: keyset pages cost the same at any depth.
async function middleCursor(deps: Deps): Promise<string> {
  const n = Number(
    (
      await deps.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  const row = await deps.db
    .selectFrom('messages')
    .select(['created_at', 'id'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(Math.floor(n / 2))
    .limit(1)
    .executeTakeFirstOrThrow();
  return `/inbox?before=${encodeURIComponent(`${row.created_at}.${row.id}`)}`;
}

const SCENARIOS: Scenario[] = [
  { name: 'GET /inbox (first page + bell)', path: async () => '/inbox' },
  { name: 'GET /inbox?before= (middle page)', path: middleCursor },
  { name: 'GET / (any page: the bell alone)', path: async () => '/' },
];

function bulkLoad(file: string, count: number, now: number): void {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert = db.prepare(
    'insert into messages (id, class, cause, subject_kind, subject_key, instant, headline, census, link, body, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const causes = [
    ['drift', 'drift'],
    ['coverage', 'aperture'],
    ['coverage', 'declared-input'],
    ['clock', 'threshold'],
  ] as const;
  const ids = crypto.randomBytes(16 * count);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = ids.subarray(i * 16, i * 16 + 16).toString('base64url');
      const [cls, cause] = causes[i % 4]!;
      const createdAt = now - (count - i) * SPACING_MS;
      const key = `host-${i % 5000}.example.com:443`;
      const headline = `${key} answers with a different certificate than yesterday.`;
      const link = `https://svc.example.test/subjects/service/${encodeURIComponent(key)}`;
      const body = JSON.stringify({
        message: id,
        class: cls,
        cause,
        subject: { kind: 'service', key },
        instant: new Date(createdAt).toISOString(),
        headline,
        census: i % 7,
        link,
      });
      insert.run(id, cls, cause, 'service', key, createdAt, headline, i % 7, link, body, createdAt);
    }
  })();
  db.close();
}

async function prepare(
  dir: string,
  count: number,
): Promise<{ deps: Deps; cookie: string; cleanup: () => Promise<void> }> {
  const file = path.join(dir, `inbox-${count}.sqlite`);
  const database = { kind: 'sqlite', path: file } as const;
  const first = await openDatabase(database);
  const migrated = await migrateToLatest(first.db);
  if (!migrated.ok) throw migrated.error;
  await first.db.destroy();

  const now = Date.now();
  const started = performance.now();
  bulkLoad(file, count, now);
  const loadMs = performance.now() - started;
  const size = fs.statSync(file).size;
  console.log(
    `  loaded ${count.toLocaleString('en')} messages in ${(loadMs / 1000).toFixed(1)} s (${(size / 1e6).toFixed(0)} MB)`,
  );

  const { db, dialect } = await openDatabase(database);
  const config: Config = {
    port: 0,
    host: '127.0.0.1',
    database,
    setupToken: undefined,
    secureCookies: false,
    externalUrl: undefined,
    publicUrl: 'https://svc.example.test',
    logLevel: 'silent',
    logFormat: 'json',
    trustedProxies: [],
    refusedSignInDelayMs: 1000,
    oidcCaFile: undefined,
  };
  const deps: Deps = {
    db,
    dialect,
    config,
    clock: systemClock,
    random: systemRandom,
    log: pino({ level: 'silent' }),
    wakeup: createDeliveryWakeup(),
  };
  await db
    .insertInto('accounts')
    .values({
      id: 'bench-account',
      username: 'bench',
      username_lower: 'bench',
      password_hash: 'not-a-real-hash',
      role: 'viewer',
      totp_enabled: 0,
      totp_enrol_prompt: 0,
      created_at: now,
    })
    .execute();
  // A realistic reader: a few of the newest messages read one by one, the rest unread.
  const newest = await db.selectFrom('messages').select('id').orderBy('created_at', 'desc').limit(20).execute();
  await markRead(
    deps,
    'bench-account',
    newest.filter((_, i) => i % 3 === 0).map((r) => r.id),
  );
  const session = await createSession(deps, 'bench-account', 'full', 'bench');
  return { deps, cookie: `svc_session=${session}`, cleanup: () => db.destroy() };
}

/** Times `rounds` requests to each target, alternating between them so machine noise hits both alike. */
async function measureInterleaved(
  targets: { deps: Deps; cookie: string; path: string }[],
): Promise<{ median: number; p95: number }[]> {
  const hits = targets.map(({ deps, cookie, path: target }) => {
    const app = createApp(deps);
    return async () => {
      const res = await app.request(`http://localhost${target}`, { headers: { cookie } });
      if (res.status !== 200) throw new Error(`${target} answered ${res.status}`);
      await res.text();
    };
  });
  for (let i = 0; i < WARMUP; i++) for (const hit of hits) await hit();
  const times: number[][] = hits.map(() => []);
  for (let i = 0; i < ROUNDS; i++) {
    for (const [k, hit] of hits.entries()) {
      const t0 = performance.now();
      await hit();
      times[k]!.push(performance.now() - t0);
    }
  }
  return times.map((ts) => {
    ts.sort((a, b) => a - b);
    return { median: ts[Math.floor(ts.length / 2)]!, p95: ts[Math.floor(ts.length * 0.95)]! };
  });
}

// For contrast only (the app never runs it): the naive unread count over the whole table.
async function measureNaiveCount(deps: Deps): Promise<{ median: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    await deps.db
      .selectFrom('messages as m')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('message_reads as r')
              .select('r.message_id')
              .where('r.account_id', '=', 'bench-account')
              .whereRef('r.message_id', '=', 'm.id'),
          ),
        ),
      )
      .executeTakeFirstOrThrow();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, p95: times[Math.floor(times.length * 0.95)]! };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-inbox-'));
  const stores: Awaited<ReturnType<typeof prepare>>[] = [];
  const rows: [string, { median: number; p95: number }[]][] = [];
  try {
    for (const size of SIZES) {
      console.log(`store of ${size.toLocaleString('en')} messages:`);
      stores.push(await prepare(dir, size));
    }
    for (const s of SCENARIOS) {
      const targets = await Promise.all(
        stores.map(async (st) => ({ deps: st.deps, cookie: st.cookie, path: await s.path(st.deps) })),
      );
      rows.push([s.name, await measureInterleaved(targets)]);
    }
    const naive = [];
    for (const st of stores) naive.push(await measureNaiveCount(st.deps));
    rows.push(['baseline: naive full-table unread count', naive]);
  } finally {
    for (const st of stores) await st.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const [small, large] = SIZES as [number, number];
  const pad = (s: string, n: number) => s.padEnd(n);
  const fmt = (r: { median: number; p95: number }) => `${r.median.toFixed(2)} ms (p95 ${r.p95.toFixed(2)})`;
  console.log('');
  console.log(
    `${pad('scenario', 42)}${pad(`${small.toLocaleString('en')} messages`, 26)}${pad(`${large.toLocaleString('en')} messages`, 26)}ratio (median)`,
  );
  for (const [name, [a, b]] of rows) {
    console.log(`${pad(name, 42)}${pad(fmt(a!), 26)}${pad(fmt(b!), 26)}${(b!.median / a!.median).toFixed(2)}x`);
  }
}

await main();

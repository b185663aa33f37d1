// Runs every *.test.ts(x) under src/ and test/ with Node's test runner; each file is its own process
// and makes its own databases (SQLite always; PostgreSQL too when TEST_DATABASE_URL is set).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from './build.mjs';

// Tests that spawn bin/svc.js run dist/, so it is built from the current sources first.
await build().catch(() => process.exit(1)); // esbuild has printed the errors

const roots = ['src', 'test'];
const only = process.argv.slice(2);
const files = [];
function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (/\.test\.tsx?$/.test(entry.name)) files.push(full);
  }
}
for (const root of roots) if (fs.existsSync(root)) walk(root);
const selected = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
files.sort();

console.log(
  `Running ${selected.length} test files on ${process.env.TEST_DATABASE_URL ? 'SQLite and PostgreSQL' : 'SQLite (set TEST_DATABASE_URL to add PostgreSQL)'}`,
);
// --test-timeout guards against a hang, per file: the axe page test checks about 140 page views per database, which
// takes a minute a database on a loaded two-core machine, so the limit is 5 minutes.
// Tests read svc's log lines from pipes, where it writes JSON unless SVC_LOG_FORMAT says otherwise: a developer's own
// setting is not passed on.
const { SVC_LOG_FORMAT: _ownFormat, ...env } = process.env;
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-timeout=300000',
    '--test-reporter=spec',
    ...selected.sort(),
  ],
  { stdio: 'inherit', env: { ...env, NODE_NO_WARNINGS: '1' } },
);
process.exit(result.status ?? 1);

// npm run bench [-- name ...]: builds dist/ (the footprint and flood benches run the built `svc`), then runs every
// bench/*.bench.ts whose name contains one of the given words (all of them by default), one after the other.
// Each prints its figures beside a baseline measured in the same run, and the budget where there is one.
// PostgreSQL cases run when TEST_DATABASE_URL is set; BENCH_SECONDS shortens or lengthens the timed phases.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { build } from '../scripts/build.mjs';

const only = process.argv.slice(2);
const all = fs
  .readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
const files = all.filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
if (files.length === 0) {
  console.error(
    `no bench matches ${only.join(', ')}; there are: ${all.map((f) => f.replace('.bench.ts', '')).join(', ')}`,
  );
  process.exit(2);
}
await build().catch(() => process.exit(1)); // esbuild has printed the errors
let failed = false;
for (const file of files) {
  console.log(`\n== ${file}`);
  const started = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', new URL(file, import.meta.url).pathname], {
    stdio: 'inherit',
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  console.log(`   (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);

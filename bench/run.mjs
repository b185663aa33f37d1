// npm run bench: runs every bench/*.bench.ts in turn; each prints its figures beside its own baseline.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const only = process.argv.slice(2);
const files = fs.readdirSync(new URL('.', import.meta.url)).filter((f) => f.endsWith('.bench.ts')).sort();
let failed = false;
for (const file of files.filter((f) => only.length === 0 || only.some((o) => f.includes(o)))) {
  console.log(`\n== ${file}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', new URL(file, import.meta.url).pathname], { stdio: 'inherit', env: { ...process.env, NODE_NO_WARNINGS: '1' } });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);

// Builds dist/svc.js from src/cli/main.ts with esbuild, so svc runs plain JavaScript (no compiler at run time).
// Run by `npm install` (prepare), `npm run build`, and before the tests; several builds at once are safe.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = path.join(root, 'dist', 'svc.js');

/** Bundles the sources into dist/svc.js (dependencies stay imports of node_modules); returns the file's path. */
export async function build() {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['src/cli/main.ts'],
    outfile,
    bundle: true,
    // Dependencies load from node_modules as they are; only our own sources are compiled.
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    tsconfig: 'tsconfig.json',
    sourcemap: 'linked',
    logLevel: 'warning',
    write: false,
  });
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  // Each file is written under a private name and renamed: a process starting meanwhile sees the old or the new build, never half of one.
  for (const file of result.outputFiles) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, file.contents);
    fs.renameSync(tmp, file.path);
  }
  return outfile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  build().then(
    (file) => console.log(`built ${path.relative(root, file)}`),
    () => process.exit(1), // esbuild has already printed the errors
  );
}

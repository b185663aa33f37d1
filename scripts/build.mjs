// Builds dist/svc.js from src/cli/main.ts with esbuild, so svc runs plain JavaScript (no compiler at run time).
// Run by `npm install` (prepare), `npm run build`, and before the tests; several builds at once are safe.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = path.join(root, 'dist', 'svc.js');
/** The ceremony script (the only script svc serves, on the pages that run a WebAuthn ceremony): src/http/ceremony.tsx. */
const ceremonyFile = path.join(root, 'static', 'passkeys.js');
const { dependencies } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/**
 * Dependencies compiled into dist/ with our sources. Kysely ships as hundreds of small ES modules: loading them one by
 * one was about 100 ms of every process's start-up (svc serve cold start 503-532 -> 414-428 ms, idle RSS 88-89 -> 83-84
 * MB, svc emit 0.33 -> 0.26 s; npm run bench -- footprint, alternating). Only a package that no external dependency
 * imports may be listed, or two copies of it would meet (zod, imported by @hono/zod-openapi, may not).
 */
const BUNDLED = ['kysely'];

/**
 * Bundles the sources into dist/svc.js (dependencies stay imports of node_modules); returns the file's path. Code
 * loaded by a dynamic import() (each command of src/cli/main.ts, the JSON API in src/api.ts) goes into chunks beside
 * it, loaded when first needed; chunks are named by their content, so a build never overwrites a chunk that a running
 * process may still load.
 */
export async function build() {
  await buildCeremonyScript();
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { svc: 'src/cli/main.ts' },
    outdir: path.dirname(outfile),
    entryNames: '[name]',
    // Chunks sit beside svc.js, so `import.meta.url` means the same directory in every one (app.ts finds ../static).
    chunkNames: '[name]-[hash]',
    splitting: true,
    bundle: true,
    // Dependencies load from node_modules as they are, except those in BUNDLED.
    external: Object.keys(dependencies)
      .filter((name) => !BUNDLED.includes(name))
      .flatMap((name) => [name, `${name}/*`]),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    tsconfig: 'tsconfig.json',
    sourcemap: 'linked',
    logLevel: 'warning',
    write: false,
  });
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  // Each file is written under a private name and renamed: a process starting meanwhile sees the old or the new build,
  // never half of one. Chunks come first, so the entry never names a chunk that is not there yet.
  const entryLast = [...result.outputFiles].sort(
    (a, b) => Number(a.path.startsWith(outfile)) - Number(b.path.startsWith(outfile)),
  );
  for (const file of entryLast) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, file.contents);
    fs.renameSync(tmp, file.path);
  }
  // Chunks of earlier builds (dist/ holds nothing else) go once no process started in the last day can still want them.
  const dist = path.dirname(outfile);
  const current = new Set(result.outputFiles.map((f) => f.path));
  for (const name of fs.readdirSync(dist)) {
    const file = path.join(dist, name);
    if (current.has(file) || file.startsWith(outfile)) continue;
    try {
      if (Date.now() - fs.statSync(file).mtimeMs > 24 * 60 * 60 * 1000) fs.rmSync(file);
    } catch {
      // Another build removed it first.
    }
  }
  return outfile;
}

/**
 * Bundles the browser side of passkeys (@simplewebauthn/browser and svc's few lines) into static/passkeys.js, beside
 * app.css, where src/app.ts and dist/svc.js both find it. Written under a private name and renamed, as above. The
 * library's MIT license asks for its notice in every copy: the script opens with it (its name, version and license).
 */
async function buildCeremonyScript() {
  const library = path.join(root, 'node_modules', '@simplewebauthn', 'browser');
  const { name, version, license } = JSON.parse(fs.readFileSync(path.join(library, 'package.json'), 'utf8'));
  const notice = fs.readFileSync(path.join(library, 'LICENSE.md'), 'utf8').trim().replaceAll('*/', '* /');
  const banner = `/*! Bundles ${name} ${version} (${license} license):\n\n${notice}\n*/`;
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['src/features/second-factor/passkeys.client.ts'],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari16'],
    minify: true,
    legalComments: 'none',
    banner: { js: banner },
    logLevel: 'warning',
    write: false,
    outfile: ceremonyFile,
  });
  const tmp = `${ceremonyFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, result.outputFiles[0].contents);
  fs.renameSync(tmp, ceremonyFile);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  build().then(
    (file) => console.log(`built ${path.relative(root, file)}`),
    () => process.exit(1), // esbuild has already printed the errors
  );
}

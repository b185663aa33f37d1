// Dependency direction, checked: domain and data code never import the web layer, and only app.ts mounts route files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');

/** Every source file under src/, as a path relative to the repository root. */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|mts|mjs|js)$/.test(entry.name) ? [path.relative(root, full)] : [];
  });
}

/** The module specifiers a file imports: static, type-only, re-exports, dynamic import() and require(). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** What a specifier names: a repository-relative path for relative imports, else the package specifier. */
function target(file: string, specifier: string): string {
  return specifier.startsWith('.') ? path.relative(root, path.resolve(root, path.dirname(file), specifier)) : specifier;
}

const isDomainOrData = (file: string) =>
  /\.(service|repo)\.ts$/.test(file) || file.startsWith(`src${path.sep}db${path.sep}`) || file.startsWith(`src${path.sep}net${path.sep}`);
const isHono = (t: string) => t === 'hono' || t.startsWith('hono/') || t.startsWith('@hono/');
const isHttp = (t: string) => t.startsWith(`src${path.sep}http${path.sep}`);
const isRoutes = (t: string) => /\.routes\.tsx?$/.test(t);

const files = sourceFiles(src);
const edges = files.flatMap((file) => importsOf(file).map((specifier) => ({ file, specifier, to: target(file, specifier) })));

test('the parser sees every kind of import it is meant to check', () => {
  const sample = `import a from 'hono';\nimport type { B } from '../http/env.ts';\nexport * from './x.routes.tsx';\nawait import('hono/cookie');`;
  assert.deepEqual(ts.preProcessFile(sample, true, true).importedFiles.map((f) => f.fileName), ['hono', '../http/env.ts', './x.routes.tsx', 'hono/cookie']);
  assert.ok(files.includes(path.join('src', 'app.ts')) && files.length > 50, `found ${files.length} files`);
  assert.ok(edges.some((e) => e.file === path.join('src', 'app.ts') && isRoutes(e.to)), 'app.ts mounts route files');
});

test('no service, repo, db or net file imports hono or src/http', () => {
  const violations = edges.filter((e) => isDomainOrData(e.file) && (isHono(e.to) || isHttp(e.to))).map((e) => `${e.file} imports ${e.specifier}`);
  assert.deepEqual(violations, []);
});

test('only src/app.ts (pages) and src/api.ts (the JSON API) import route files', () => {
  const mounts = [path.join('src', 'app.ts'), path.join('src', 'api.ts')];
  const violations = edges.filter((e) => !mounts.includes(e.file) && isRoutes(e.to)).map((e) => `${e.file} imports ${e.specifier}`);
  assert.deepEqual(violations, []);
});

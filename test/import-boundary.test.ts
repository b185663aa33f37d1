// Dependency direction, checked: domain and data code never import the web layer, only app.ts mounts route files,
// src/http imports no feature, and features import (values) only from features below them in src/features/order.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { FEATURE_ORDER } from '../src/features/order.ts';

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
  /\.(service|repo)\.ts$/.test(file) ||
  file.startsWith(`src${path.sep}db${path.sep}`) ||
  file.startsWith(`src${path.sep}net${path.sep}`);
const isHono = (t: string) => t === 'hono' || t.startsWith('hono/') || t.startsWith('@hono/');
const isHttp = (t: string) => t.startsWith(`src${path.sep}http${path.sep}`);
const isRoutes = (t: string) => /\.routes\.tsx?$/.test(t);

const files = sourceFiles(src);
const edges = files.flatMap((file) =>
  importsOf(file).map((specifier) => ({ file, specifier, to: target(file, specifier) })),
);

test('the parser sees every kind of import it is meant to check', () => {
  const sample = `import a from 'hono';\nimport type { B } from '../http/env.ts';\nexport * from './x.routes.tsx';\nawait import('hono/cookie');`;
  assert.deepEqual(
    ts.preProcessFile(sample, true, true).importedFiles.map((f) => f.fileName),
    ['hono', '../http/env.ts', './x.routes.tsx', 'hono/cookie'],
  );
  assert.ok(files.includes(path.join('src', 'app.ts')) && files.length > 50, `found ${files.length} files`);
  assert.ok(
    edges.some((e) => e.file === path.join('src', 'app.ts') && isRoutes(e.to)),
    'app.ts mounts route files',
  );
});

test('no service, repo, db or net file imports hono or src/http', () => {
  const violations = edges
    .filter((e) => isDomainOrData(e.file) && (isHono(e.to) || isHttp(e.to)))
    .map((e) => `${e.file} imports ${e.specifier}`);
  assert.deepEqual(violations, []);
});

test('only src/app.ts (pages) and src/api.ts (the JSON API) import route files', () => {
  const mounts = [path.join('src', 'app.ts'), path.join('src', 'api.ts')];
  const violations = edges
    .filter((e) => !mounts.includes(e.file) && isRoutes(e.to))
    .map((e) => `${e.file} imports ${e.specifier}`);
  assert.deepEqual(violations, []);
});

/**
 * The module specifiers a file imports for their values: static imports and re-exports that bring at least one value
 * (not `import type`, nor a list whose every name is marked `type`), side-effect imports, and dynamic import().
 */
function valueImportsOf(file: string, text = fs.readFileSync(path.join(root, file), 'utf8')): string[] {
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const allTypes = (names: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>) =>
    names.length > 0 && names.every((n) => n.isTypeOnly);
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (!clause.name &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            allTypes(clause.namedBindings.elements)));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          allTypes(node.exportClause.elements));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const featuresDir = path.join('src', 'features');
/**
 * The feature folder a repository-relative path lies in, or undefined (outside src/features, or a file directly in it).
 */
function featureOf(p: string): string | undefined {
  const parts = path.relative(featuresDir, p).split(path.sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
}
/** A feature's place in the declared order; files directly in src/features/ sit below every folder. */
const rank = (feature: string | undefined) =>
  feature === undefined ? -1 : (FEATURE_ORDER as readonly string[]).indexOf(feature);

/** Every value import from a feature file to a feature above its own (or to one not in the declared order). */
function upwardImports(
  fileList: string[],
  read: (file: string) => string[] = (file) => valueImportsOf(file),
): string[] {
  return fileList.flatMap((file) => {
    if (!file.startsWith(featuresDir + path.sep)) return [];
    const from = featureOf(file);
    return read(file)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({ specifier, to: target(file, specifier) }))
      .filter(({ to }) => to.startsWith(featuresDir + path.sep) && featureOf(to) !== from)
      .filter(({ to }) => (rank(featureOf(to)) === -1 ? featureOf(to) !== undefined : rank(featureOf(to)) > rank(from)))
      .map(
        ({ to }) =>
          `${file} imports ${to}: ${featureOf(to)} is not below ${from ?? 'src/features/'} in src/features/order.ts`,
      );
  });
}

test('the declared feature order names every feature folder once', () => {
  const folders = fs
    .readdirSync(path.join(root, featuresDir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.deepEqual([...FEATURE_ORDER].sort(), folders.sort());
  assert.equal(new Set(FEATURE_ORDER).size, FEATURE_ORDER.length);
});

test('the value-import reader tells values from types', () => {
  const sample = [
    `import type { A } from './a.ts';`,
    `import { type B, type C } from './b.ts';`,
    `import { type D, e } from './d.ts';`,
    `import f from './f.ts';`,
    `import './g.ts';`,
    `export { h } from './h.ts';`,
    `export type { I } from './i.ts';`,
    `const j = await import('./j.ts');`,
  ].join('\n');
  assert.deepEqual(valueImportsOf('sample.ts', sample), ['./d.ts', './f.ts', './g.ts', './h.ts', './j.ts']);
});

test('features import values only from features below them, naming both files otherwise', () => {
  assert.deepEqual(upwardImports(files), []);
  // The check itself: an upward import (auth reaching the home page) is named with both files, a downward one is not.
  const auth = path.join(featuresDir, 'auth', 'login.routes.tsx');
  const home = path.join(featuresDir, 'home', 'home.service.ts');
  assert.deepEqual(
    upwardImports([auth], () => ['../home/home.service.ts', './sessions.service.ts', '../text-rules.ts']),
    [`${auth} imports ${home}: home is not below auth in src/features/order.ts`],
  );
  assert.deepEqual(
    upwardImports([home], () => ['../auth/sessions.service.ts']),
    [],
  );
  // A folder missing from the order counts as above everything.
  assert.equal(upwardImports([auth], () => ['../newfeature/x.ts']).length, 1);
});

test('src/http imports no feature, not even a type', () => {
  const violations = edges
    .filter((e) => isHttp(e.file) && e.to.startsWith(featuresDir + path.sep))
    .map((e) => `${e.file} imports ${e.to}`);
  assert.deepEqual(violations, []);
  assert.ok(
    edges.some((e) => isHttp(e.file)),
    'src/http files are read',
  );
});

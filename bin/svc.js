#!/usr/bin/env node
// Entry point: runs the JavaScript that `npm install` (or `npm run build`) built from src/ into dist/.
import fs from 'node:fs';

const built = new URL('../dist/svc.js', import.meta.url);
if (!fs.existsSync(built)) {
  process.stderr.write('svc: dist/svc.js is missing; run `npm install` (or `npm run build`) first\n');
  process.exit(1);
}
// Stack traces in logs then name the TypeScript sources rather than the bundle.
process.setSourceMapsEnabled(true);
await import(built.href);

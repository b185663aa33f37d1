// Types of scripts/build.mjs for the TypeScript tests that build before spawning bin/svc.js.
/** Bundles the sources into dist/svc.js; returns the file's path. */
export function build(): Promise<string>;

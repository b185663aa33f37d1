// The commands' way in to the runtime: runtime.ts (config, database drivers, migrations) is loaded when a command first
// calls startRuntime(), so `svc --help`, a command's --help and flag mistakes answer without loading a database driver
// (cli.test.ts checks).
import type { Deps } from '../deps.ts';
import type { startRuntime as start } from './runtime.ts';

/** Loads the runtime and starts it: see runtime.ts. */
export async function startRuntime(...args: Parameters<typeof start>): Promise<Deps> {
  return (await import('./runtime.ts')).startRuntime(...args);
}

/** Prints every configuration problem, as each command presents them; returns exit code 2. */
export function reportInvalidConfiguration(errors: string[]): 2 {
  process.stderr.write(`svc: invalid configuration:\n${errors.map((e) => `  - ${e}`).join('\n')}\n`);
  return 2;
}

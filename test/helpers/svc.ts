// Runs the svc command line as an operator would: bin/svc.js (the build of the sources) in a child process.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openDatabase } from '../../src/db/connect.ts';
import type { Config } from '../../src/config.ts';
import type { TestDatabase } from './db.ts';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** What one run answered: its exit code and both streams. */
export interface SvcRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `svc <args>` with `env` added; resolves with the exit code and output whatever the code. */
export async function svc(args: string[], env: Record<string, string> = {}): Promise<SvcRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], {
      env: { ...process.env, NODE_NO_WARNINGS: '1', SVC_LOG_LEVEL: 'info', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The DATABASE_URL that names a test database. */
export function databaseUrlOf(tdb: TestDatabase): string {
  return tdb.database.kind === 'sqlite' ? tdb.database.path : tdb.database.url;
}

/** A long-running svc process (serve, worker, emit under load): the process, and everything it has logged so far. */
export interface SvcChild {
  proc: ChildProcess;
  log: () => string;
}

/** Starts `svc <args>` with `env` added, collecting both streams; the caller stops it. */
export function spawnSvc(args: string[], env: Record<string, string>): SvcChild {
  const proc = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env, SVC_LOG_LEVEL: 'info', NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  proc.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  return { proc, log: () => log };
}

/** Migrates `database` with `svc migrate`, as an operator would, and opens it for the test (the test removes it). */
export async function migrateWithSvc(database: Config['database']): Promise<TestDatabase> {
  const url = database.kind === 'sqlite' ? database.path : database.url;
  const migrated = await svc(['migrate'], { DATABASE_URL: url });
  if (migrated.code !== 0) throw new Error(`svc migrate failed: ${migrated.stderr}`);
  return { ...(await openDatabase(database)), database, drop: async () => undefined };
}

// A PostgreSQL server of the test's own (Debian's initdb and pg_ctl, a temp data folder, a free loopback port), for
// tests that stop and start the database: the machine's shared instance is never touched. As root the server runs as
// the `postgres` user (PostgreSQL refuses to run as root).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { closedPort } from './ports.ts';

const exec = promisify(execFile);

/** Debian's initdb: linked into /usr/local/bin on this machine, else in the newest /usr/lib/postgresql/<version>/bin. */
function findInitdb(): string | undefined {
  if (fs.existsSync('/usr/local/bin/initdb')) return '/usr/local/bin/initdb';
  const versions = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql') : [];
  const found = versions
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => `/usr/lib/postgresql/${v}/bin/initdb`)
    .find((p) => fs.existsSync(p));
  return found;
}

/** Where the server binaries are, or why a test needing them cannot run. */
export const INITDB = findInitdb() ?? '/usr/lib/postgresql/<version>/bin/initdb';
export const privatePostgresMissing = fs.existsSync(INITDB)
  ? undefined
  : "PostgreSQL server binaries (Debian's postgresql package: initdb, pg_ctl) are not installed";

/** A running private server: its URL for `database`, and stop/start/remove. */
export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** Stops the server; 'fast' ends every session with "terminating connection due to administrator command". */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
  /** Stops it (if running) and deletes its folder. */
  remove(): Promise<void>;
}

/** Runs a server binary, as `postgres` when this process is root. */
async function run(bin: string, args: string[]): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  await exec(asRoot ? 'runuser' : bin, asRoot ? ['-u', 'postgres', '--', bin, ...args] : args, { timeout: 60_000 });
}

/** Makes and starts a private server with one database, `svc`. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-private-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await exec('id', ['-u', 'postgres']);
    const { stdout: gid } = await exec('id', ['-g', 'postgres']);
    fs.chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = path.join(dir, 'data');
  const port = await closedPort();
  await run(INITDB, ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const pgCtl = path.join(path.dirname(fs.realpathSync(INITDB)), 'pg_ctl');
  const start = () =>
    run(pgCtl, ['-D', data, '-o', options, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  let running = false;
  await start();
  running = true;
  const server: PrivatePostgres = {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async stop(mode = 'fast') {
      await run(pgCtl, ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async remove() {
      if (running) await server.stop('immediate').catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  await admin.query('create database svc');
  await admin.end();
  return server;
}

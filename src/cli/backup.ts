// svc backup <file>: a consistent copy of the SQLite database while svc runs (SQLite's online backup API on a
// connection of its own), checked with PRAGMA integrity_check before it takes the file's name. PostgreSQL: pg_dump's
// job.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { absentSqliteFile, loadConfig } from '../config.ts';
import { createPrivateFile } from '../db/file-modes.ts';
import { reportInvalidConfiguration } from './start.ts';

export const BACKUP_HELP = `Usage: svc backup <file> [--force]

Writes a consistent copy of the SQLite database named by DATABASE_URL to <file>, safely while svc serves and delivers
(SQLite's online backup API), checks the copy with PRAGMA integrity_check, and only then gives it the name <file>
(a self-contained file: no -wal beside it, readable and writable by its owner only: 0600). It never migrates or
changes the database.

  --force   overwrite <file> if it exists (refused otherwise)

Restore: stop svc, copy the backup over the database file (remove any -wal and -shm files beside it), start svc.
On PostgreSQL, back up with pg_dump instead (see docs/operations.md).

Exit codes: 0 written and checked, 1 failed (nothing left at <file>), 2 usage error, refused, or PostgreSQL.
`;

/** Runs `svc backup`; returns the exit code. */
export async function runBackup(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    options: { force: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(BACKUP_HELP);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0]!.trim() === '')
    return refuse(`name one file to write the backup to\n\n${BACKUP_HELP}`);
  const loaded = loadConfig();
  if (!loaded.ok) return reportInvalidConfiguration(loaded.errors);
  const database = loaded.config.database;
  if (database.kind === 'postgres') {
    return refuse(
      "DATABASE_URL names a PostgreSQL database; back it up with PostgreSQL's own tool, for example\n" +
        '  pg_dump --format=custom --file=svc.dump "$DATABASE_URL"\n' +
        'and restore with pg_restore (see docs/operations.md).',
    );
  }
  const target = path.resolve(positionals[0]!);
  if (database.path === ':memory:') return fail('there is no SQLite database at :memory: (DATABASE_URL)');
  const absent = absentSqliteFile(database);
  if (absent !== undefined) return fail(`no svc database at ${absent} (DATABASE_URL); check DATABASE_URL`);
  if (target === path.resolve(database.path)) return refuse('the backup file must not be the database itself');
  if (fs.existsSync(target) && !values.force)
    return refuse(`${target} already exists; choose another name or pass --force to overwrite it`);
  if (!fs.existsSync(path.dirname(target))) return fail(`the directory ${path.dirname(target)} does not exist`);

  // Written beside the target under a temporary name, so a failed or interrupted backup never leaves a partial <file>.
  const partial = `${target}.partial-${crypto.randomBytes(4).toString('hex')}`;
  try {
    // Made empty and 0600 first (whatever the umask): the copy holds every secret the database does.
    createPrivateFile(partial);
    const pages = await copyDatabase(database.path, partial);
    const problems = checkIntegrity(partial);
    if (problems.length > 0) {
      removeCopy(partial);
      return fail(`the copy failed its integrity check; nothing written:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    }
    fs.renameSync(partial, target);
    process.stdout.write(
      `svc backup: wrote ${target} (${pages} pages, ${fs.statSync(target).size} bytes); integrity check ok\n`,
    );
    return 0;
  } catch (err) {
    removeCopy(partial);
    return fail(`could not write the backup: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** SQLite's online backup from a connection of its own to `source` into a new file `copy`; returns the pages copied. */
async function copyDatabase(source: string, copy: string): Promise<number> {
  const db = new SQLite(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const { totalPages } = await db.backup(copy);
    return totalPages;
  } finally {
    db.close();
  }
}

/** PRAGMA integrity_check on the copy (empty when it is sound); also makes the copy one self-contained file. */
function checkIntegrity(copy: string): string[] {
  const db = new SQLite(copy, { fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== 'ok');
    // The source runs in WAL mode and the copy inherits it: switch to a rollback journal so no -wal file is needed.
    if (problems.length === 0) db.pragma('journal_mode = DELETE');
    return problems;
  } finally {
    db.close();
  }
}

/** Deletes a partial copy and the journal files SQLite may have made beside it. */
function removeCopy(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, { force: true });
}

function refuse(message: string): number {
  process.stderr.write(`svc backup: ${message}\n`);
  return 2;
}

function fail(message: string): number {
  process.stderr.write(`svc backup: ${message}\n`);
  return 1;
}

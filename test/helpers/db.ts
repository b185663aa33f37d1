// A fresh, migrated database per test file and dialect: a temp SQLite file, or a uniquely named PostgreSQL database.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import { Migrator, type Kysely } from 'kysely';
import pg from 'pg';
import type { Config } from '../../src/config.ts';
import { openDatabase, type Database, type Dialect } from '../../src/db/connect.ts';
import { migrateToLatest, migrations } from '../../src/db/migrate.ts';

/** The dialects under test: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function dialects(): Dialect[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A test database: connection, the config block that opens it again (for child processes), and cleanup. */
export interface TestDatabase extends Database {
  database: Config['database'];
  drop(): Promise<void>;
}

/** Creates a fresh database of the given dialect, migrated unless asked not to be. */
export async function createTestDatabase(dialect: Dialect, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const name = `svc_test_${Date.now().toString(36)}_${crypto.randomBytes(4).toString('hex')}`;
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
    const database = { kind: 'sqlite', path: path.join(dir, `${name}.sqlite`) } as const;
    const opened = await openDatabase(database);
    if (migrate) await migrateOrThrow(opened);
    return {
      ...opened,
      database,
      drop: async () => {
        await opened.db.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = { kind: 'postgres', url: url.href } as const;
  const opened = await openDatabase(database);
  if (migrate) await migrateOrThrow(opened);
  return {
    ...opened,
    database,
    drop: async () => {
      await opened.db.destroy();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

async function migrateOrThrow(opened: Database) {
  const result = await migrateToLatest(opened.db);
  if (!result.ok) throw result.error;
}

/**
 * Runs `suite` once per dialect inside describe(dialect). `get()` returns that dialect's database,
 * created before the suite's tests and dropped after them.
 */
export function forEachDialect(suite: (get: () => TestDatabase, dialect: Dialect) => void): void {
  for (const dialect of dialects()) {
    describe(dialect, () => {
      let tdb: TestDatabase | undefined;
      before(async () => {
        tdb = await createTestDatabase(dialect);
      });
      after(async () => {
        await tdb?.drop();
      });
      suite(() => {
        if (!tdb) throw new Error('test database not ready');
        return tdb;
      }, dialect);
    });
  }
}

/** A migrator over the migrations up to and including `last` (by name): starts a test from an older schema. */
export function migratorThrough(db: Kysely<any>, last: string): Migrator {
  const set = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last));
  return new Migrator({ db, provider: { getMigrations: async () => set }, allowUnorderedMigrations: true });
}

// Several instances starting at once against one empty database: each runs `svc migrate` as its own process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, dialects } from '../../test/helpers/db.ts';
import { migrateToLatest } from './migrate.ts';

const run = promisify(execFile);
const bin = new URL('../../bin/svc.js', import.meta.url).pathname;

for (const dialect of dialects()) {
  test(`${dialect}: three processes migrating one empty database at once all succeed, leaving it up to date`, async () => {
    const empty = await createTestDatabase(dialect, { migrate: false });
    try {
      const url = empty.database.kind === 'sqlite' ? empty.database.path : empty.database.url;
      const results = await Promise.all(
        [0, 1, 2].map(() =>
          run(process.execPath, [bin, 'migrate'], {
            env: { ...process.env, DATABASE_URL: url, SVC_LOG_LEVEL: 'info' },
          }),
        ),
      );
      const applied = results.flatMap((r) => r.stdout.split('\n').filter((l) => l.includes('"applied"')));
      assert.equal(applied.length, 1, 'exactly one process applied the migrations');
      assert.deepEqual(await migrateToLatest(empty.db), { ok: true, applied: [] });
    } finally {
      await empty.drop();
    }
  });
}

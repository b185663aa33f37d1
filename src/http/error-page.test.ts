import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { signedInAs } from '../../test/helpers/factories.ts';

forEachDialect((getDb) => {
  test('a request that fails on the database gets the plain 500 page with every security header and one log line', async () => {
    const t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'admin');
    // The bell's count reads message_reads: without it, rendering a signed-in page fails inside the route.
    await sql`alter table message_reads rename to message_reads_gone`.execute(t.deps.db);
    try {
      const before = t.logs.length;
      const res = await client.get('/');
      assert.equal(res.status, 500);
      assert.match(res.text, /Something went wrong/);
      assert.doesNotMatch(res.text, /message_reads|at \S+\.(ts|js):\d+/, 'no SQL and no stack trace in the page');
      assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'none'/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const failures = t.logs.slice(before).filter((line) => line.includes('"request failed"'));
      assert.equal(failures.length, 1, 'logged once, not once per middleware layer');
      // The error page itself still names the signed-in viewer (it reads no table to do so).
      assert.match(res.text, /Sign out/);
    } finally {
      await sql`alter table message_reads_gone rename to message_reads`.execute(t.deps.db);
    }
  });
});

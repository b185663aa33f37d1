import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from './connect.ts';

test('openDatabase creates a SQLite file and its directory, unless told not to: then a missing file is an error and nothing is made', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-connect-'));
  try {
    const file = path.join(dir, 'sub', 'svc.sqlite');
    await assert.rejects(openDatabase({ kind: 'sqlite', path: file }, { create: false }));
    assert.deepEqual(fs.readdirSync(dir), [], 'no directory, no file');
    const created = await openDatabase({ kind: 'sqlite', path: file });
    await created.db.destroy();
    assert.ok(fs.existsSync(file));
    const reopened = await openDatabase({ kind: 'sqlite', path: file }, { create: false });
    await reopened.db.destroy();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// svc backup, svc config check and svc invite as an operator runs them (bin/svc.js runs the build of the sources).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { build } from '../../scripts/build.mjs';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { buildChannel } from '../../test/helpers/outbox.ts';
import { svc } from '../../test/helpers/svc.ts';

before(() => build());

test('every command answers --help with exit 0', async () => {
  for (const command of ['serve', 'worker', 'migrate', 'emit', 'invite', 'accounts', 'backup', 'config']) {
    const { code, stdout } = await svc([command, '--help']);
    assert.equal(code, 0, command);
    assert.match(stdout, new RegExp(`Usage: svc ${command}`), command);
  }
  assert.equal((await svc(['backup', '--bogus'])).code, 2, 'an unknown flag is a usage error');
});

test('svc config check prints the effective settings, secrets only as set or not set', async () => {
  const secrets = { SVC_SETUP_TOKEN: 'setup-token-0123456789', SVC_METRICS_TOKEN: 'metrics-token-0123456789' };
  const url = 'postgres://svc:db-password-xyz@db.internal:5432/svc?sslpassword=key-pass-xyz&application_name=svc';
  const { code, stdout } = await svc(['config', 'check'], {
    ...secrets,
    DATABASE_URL: url,
    PORT: '9000',
    SVC_TRUSTED_PROXIES: '10.0.0.0/8',
  });
  assert.equal(code, 0);
  assert.match(stdout, /^PORT +9000$/m);
  assert.match(
    stdout,
    /^DATABASE_URL +postgres:\/\/svc@db\.internal:5432\/svc\?application_name=svc \(password set\) \(PostgreSQL\)$/m,
  );
  assert.match(stdout, /^SVC_SETUP_TOKEN +set/m);
  assert.match(stdout, /^SVC_METRICS_TOKEN +set \(\/metrics is on\)$/m);
  assert.match(stdout, /^SVC_TRUSTED_PROXIES +10\.0\.0\.0\/8$/m);
  for (const secret of [...Object.values(secrets), 'db-password-xyz', 'key-pass-xyz'])
    assert.ok(!stdout.includes(secret), `${secret} is not printed`);

  const bad = await svc(['config', 'check'], { PORT: 'x', SVC_METRICS_TOKEN: 'too-short' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /PORT/);
  assert.match(bad.stderr, /SVC_METRICS_TOKEN must be at least 16 characters/);
  assert.ok(!bad.stderr.includes('too-short'));
  assert.equal((await svc(['config'])).code, 2, '"check" is required');
});

test('svc config check shows where a SQLite path resolves, and whether the file is still to be created', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
  try {
    const file = path.join(dir, 'typo', 'svc.sqlite');
    const absent = await svc(['config', 'check'], { DATABASE_URL: file });
    assert.equal(absent.code, 0);
    assert.match(
      absent.stdout,
      new RegExp(
        `^DATABASE_URL +${file} \\(SQLite at ${file}; does not exist yet: svc serve or svc migrate creates it\\)$`,
        'm',
      ),
    );
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '');
    const present = await svc(['config', 'check'], { DATABASE_URL: file });
    assert.match(present.stdout, new RegExp(`^DATABASE_URL +${file} \\(SQLite at ${file}\\)$`, 'm'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('svc invite and svc accounts name the console tab users see: Settings > Team', async () => {
  for (const args of [
    ['invite', '--help'],
    ['accounts', '--help'],
  ]) {
    const { stdout } = await svc(args);
    assert.match(stdout, /Settings > Team/, args.join(' '));
    assert.doesNotMatch(stdout, /Settings > Accounts/, args.join(' '));
  }
});

forEachDialect((getDb, dialect) => {
  const databaseUrl = () => {
    const db = getDb().database;
    return db.kind === 'sqlite' ? db.path : db.url;
  };

  test('svc invite prints a working join link, authored by the command line, even with no admin', async () => {
    const { code, stdout, stderr } = await svc(['invite', '--role', 'admin', '--note', 'break glass'], {
      DATABASE_URL: databaseUrl(),
      SVC_EXTERNAL_URL: 'https://svc.example.test',
      PORT: '0',
    });
    assert.equal(code, 0, stderr);
    const link = stdout.trim();
    assert.match(link, /^https:\/\/svc\.example\.test\/invite\?token=[A-Za-z0-9_-]{43}$/);
    const row = await getDb()
      .db.selectFrom('invitations')
      .selectAll()
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(row.role, 'admin');
    assert.equal(row.created_by, null);
    const t = buildTestApp(getDb());
    t.clock.t = Date.now();
    const page = await t.client().get(new URL(link).pathname + new URL(link).search);
    assert.equal(page.status, 200);
    assert.match(page.text, /admin/);

    const refused = await svc(['invite', '--role', 'owner'], { DATABASE_URL: databaseUrl() });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--role: choose admin or viewer/);
    assert.equal((await svc(['invite'], { DATABASE_URL: databaseUrl() })).code, 2);
  });

  if (dialect === 'postgres') {
    test('svc backup on PostgreSQL explains pg_dump and exits 2', async () => {
      const { code, stderr } = await svc(['backup', path.join(os.tmpdir(), 'never-written.sqlite')], {
        DATABASE_URL: databaseUrl(),
      });
      assert.equal(code, 2);
      assert.match(stderr, /pg_dump/);
    });
    return;
  }

  test('svc backup copies the live SQLite database, checks it, and refuses to overwrite without --force', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backup-'));
    try {
      const channel = await buildChannel(getDb().db, { url: 'https://hooks.example.com/backed-up' });
      const target = path.join(dir, 'svc-backup.sqlite');
      const first = await svc(['backup', target], { DATABASE_URL: databaseUrl() });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /integrity check ok/);
      assert.deepEqual(
        fs.readdirSync(dir),
        ['svc-backup.sqlite'],
        'one self-contained file, nothing partial beside it',
      );
      const copy = new SQLite(target, { readonly: true });
      try {
        assert.equal(
          (copy.prepare('select url from channels where id = ?').get(channel.id) as { url: string }).url,
          channel.url,
        );
        assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      } finally {
        copy.close();
      }

      const again = await svc(['backup', target], { DATABASE_URL: databaseUrl() });
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already exists; choose another name or pass --force/);
      assert.equal((await svc(['backup', '--force', target], { DATABASE_URL: databaseUrl() })).code, 0);
      assert.equal(
        (await svc(['backup', databaseUrl()], { DATABASE_URL: databaseUrl() })).code,
        2,
        'never over the database itself',
      );
      const missing = await svc(['backup', path.join(dir, 'x.sqlite')], {
        DATABASE_URL: path.join(dir, 'absent.sqlite'),
      });
      assert.equal(missing.code, 1);
      assert.equal(
        missing.stderr,
        `svc backup: no svc database at ${path.join(dir, 'absent.sqlite')} (DATABASE_URL); check DATABASE_URL\n`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

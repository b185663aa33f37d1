import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { beforeEach, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildTestApp, type TestApp } from '../../test/helpers/app.ts';
import { forEachDialect, type TestDatabase } from '../../test/helpers/db.ts';
import { until } from '../../test/helpers/delivery.ts';
import { buildAccount } from '../../test/helpers/factories.ts';
import { buildChannel, clearOutbox } from '../../test/helpers/outbox.ts';
import { startDeliveryListener } from '../features/delivery/wakeup.listener.ts';
import { CLI_ACTOR } from '../features/auth/admin-actor.ts';
import { NOT_ADMIN } from '../features/refusals.ts';
import { emitAndReport, parseEmitArgs } from './emit.ts';

const run = promisify(execFile);
const SVC = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

test('flags are parsed into an emit input, each problem naming its flag', () => {
  const good = parseEmitArgs(
    [
      '--cause',
      'aperture',
      '--subject-kind',
      'scope',
      '--subject-key',
      'k1',
      '--headline',
      'Aperture widened.',
      '--census',
      '12',
      '--seed',
      's1',
      '--instant',
      '2026-01-15T11:00:00Z',
    ],
    NOW,
  );
  assert.deepEqual(good, {
    ok: true,
    input: {
      cause: 'aperture',
      subject: { kind: 'scope', key: 'k1' },
      instant: Date.UTC(2026, 0, 15, 11),
      headline: 'Aperture widened.',
      census: 12,
      sourceId: undefined,
      seedId: 's1',
    },
  });
  const dashed = parseEmitArgs(
    ['--cause', 'drift', '--subject-kind', 's', '--subject-key', '-k', '--headline', '-3 services answer.'],
    NOW,
  );
  assert.ok(
    dashed.ok && dashed.input.headline === '-3 services answer.' && dashed.input.subject.key === '-k',
    'values may start with a dash',
  );
  const defaulted = parseEmitArgs(
    ['--cause', 'drift', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h'],
    NOW,
  );
  assert.ok(defaulted.ok && defaulted.input.instant === NOW, 'the instant defaults to now');

  const cases: [string[], RegExp][] = [
    [[], /--cause is required/],
    [['--cause', 'drift'], /--headline is required/],
    [
      ['--cause', 'rain', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h'],
      /--cause: The cause must be one of/,
    ],
    [
      ['--cause', 'drift', '--subject-kind', 's', '--subject-key', 'k', '--headline', ' '],
      /--headline: The headline is required/,
    ],
    [
      ['--cause', 'drift', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h', '--census', '-3'],
      /--census: the census must be a whole number/,
    ],
    [
      ['--cause', 'drift', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h', '--census', 'many'],
      /--census/,
    ],
    [
      [
        '--cause',
        'drift',
        '--subject-kind',
        's',
        '--subject-key',
        'k',
        '--headline',
        'h',
        '--instant',
        '2026-02-30T00:00:00Z',
      ],
      /--instant: not a valid ISO-8601 time/,
    ],
    [
      ['--cause', 'declared-input', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h'],
      /--source: The Source id/,
    ],
    [
      ['--cause', 'drift', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h', '--colour', 'red'],
      /Unknown option '--colour'/,
    ],
  ];
  for (const [args, message] of cases) {
    const parsed = parseEmitArgs(args, NOW);
    assert.equal(parsed.ok, false, args.join(' '));
    if (!parsed.ok) assert.match(parsed.errors.join('\n'), message, args.join(' '));
  }
});

function envFor(tdb: TestDatabase, publicUrl: string): NodeJS.ProcessEnv {
  const url = tdb.database.kind === 'sqlite' ? tdb.database.path : tdb.database.url;
  return { ...process.env, DATABASE_URL: url, SVC_PUBLIC_URL: publicUrl, SVC_LOG_LEVEL: 'warn', NODE_NO_WARNINGS: '1' };
}

forEachDialect((getDb, dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  test('svc emit stores the message and prints only its id', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      [
        SVC,
        'emit',
        '--cause',
        'threshold',
        '--subject-kind',
        'certificate',
        '--subject-key',
        'api.example.com',
        '--headline',
        'The certificate of api.example.com expires in 7 days.',
        '--instant',
        '2026-01-15T11:00:00Z',
        '--census',
        '1',
      ],
      { env: envFor(getDb(), 'https://svc.example.test') },
    );
    const id = stdout.trim();
    assert.match(stdout, /^[A-Za-z0-9_-]{22}\n$/);
    assert.match(stderr, /stored clock message; 0 channel deliveries queued/);
    const row = await t.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.body), {
      message: id,
      class: 'clock',
      cause: 'threshold',
      subject: { kind: 'certificate', key: 'api.example.com' },
      instant: '2026-01-15T11:00:00.000Z',
      headline: 'The certificate of api.example.com expires in 7 days.',
      census: 1,
      link: 'https://svc.example.test/subjects/certificate/api.example.com',
    });
  });

  test('svc emit counts the queued deliveries in words: 1 channel delivery, 2 channel deliveries', async () => {
    const emitDrift = () =>
      run(
        process.execPath,
        [SVC, 'emit', '--cause', 'drift', '--subject-kind', 'service', '--subject-key', 'k', '--headline', 'It moved.'],
        { env: envFor(getDb(), '') },
      );
    await buildChannel(t, { classes: 'drift' });
    assert.match((await emitDrift()).stderr, /stored drift message; 1 channel delivery queued\n/);
    await buildChannel(t, { classes: 'drift' });
    assert.match((await emitDrift()).stderr, /stored drift message; 2 channel deliveries queued\n/);
  });

  test('svc emit with bad flags exits 2, names the problems and stores nothing', async () => {
    const err = await run(
      process.execPath,
      [SVC, 'emit', '--cause', 'rain', '--subject-kind', 'x', '--subject-key', 'y', '--headline', '', '--census', '-1'],
      {
        env: envFor(getDb(), ''),
      },
    ).then(
      () => assert.fail('svc emit should fail'),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    assert.equal(err.code, 2);
    assert.equal(err.stdout, '');
    assert.match(err.stderr, /nothing stored/);
    assert.match(err.stderr, /--cause: The cause must be one of drift, aperture, declared-input, threshold/);
    assert.match(err.stderr, /--headline: The headline is required/);
    assert.match(err.stderr, /--census: the census must be a whole number of zero or more/);
    assert.equal((await t.deps.db.selectFrom('messages').select('id').execute()).length, 0);
  });

  test('what svc emit says when its actor is refused: the words every door uses, exit 1, nothing stored', async () => {
    const parsed = parseEmitArgs(
      ['--cause', 'drift', '--subject-kind', 's', '--subject-key', 'k', '--headline', 'h'],
      NOW,
    );
    assert.ok(parsed.ok);
    const said = { stdout: '', stderr: '' };
    const out = {
      stdout: { write: (text: string) => (said.stdout += text) },
      stderr: { write: (text: string) => (said.stderr += text) },
    };
    // The command line always runs as the host; an account that is not an administrator is only possible here.
    const viewer = await buildAccount(t, { role: 'viewer' });
    assert.equal(await emitAndReport(t.deps, { actorId: viewer.id }, parsed.input, out), 1);
    assert.deepEqual(said, { stdout: '', stderr: `svc emit: nothing stored: ${NOT_ADMIN.words}\n` });
    assert.equal((await t.deps.db.selectFrom('messages').select('id').execute()).length, 0);
    assert.equal(await emitAndReport(t.deps, CLI_ACTOR, parsed.input, out), 0);
    assert.match(said.stdout, /^[A-Za-z0-9_-]{22}\n$/);
    assert.equal((await t.deps.db.selectFrom('messages').select('id').execute()).length, 1);
  });

  test('svc emit on PostgreSQL wakes the workers of other processes', { skip: dialect !== 'postgres' }, async () => {
    const database = getDb().database;
    assert.equal(database.kind, 'postgres');
    const author = await buildAccount(t, { role: 'admin' });
    await buildChannel(t, { createdBy: author.id, classes: 'drift' });
    const heard: (string | undefined)[] = [];
    const listener = startDeliveryListener({
      url: database.kind === 'postgres' ? database.url : '',
      log: t.deps.log,
      onNotify: (p) => heard.push(p),
    });
    try {
      await until(() => heard.length > 0); // listening
      const { stderr } = await run(
        process.execPath,
        [SVC, 'emit', '--cause', 'drift', '--subject-kind', 'service', '--subject-key', 'k', '--headline', 'It moved.'],
        {
          env: envFor(getDb(), ''),
        },
      );
      assert.match(stderr, /1 channel delivery queued/);
      await until(() => heard.includes(''));
    } finally {
      await listener.close();
    }
  });
});

// svc accounts as an operator runs it (bin/svc.js runs the build of the sources): the list, the reset link, and the
// acts under the console's guards, on both databases.
import assert from 'node:assert/strict';
import { before, beforeEach, test } from 'node:test';
import { build } from '../../scripts/build.mjs';
import { buildTestApp, type TestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../test/helpers/factories.ts';
import { databaseUrlOf, svc } from '../../test/helpers/svc.ts';
import { buildPasskeys, passkeysOf } from '../../test/helpers/team-factories.ts';
import { sha256 } from '../deps.ts';
import { createToken } from '../features/tokens/tokens.service.ts';

before(() => build());

const SUBCOMMANDS = [
  'list',
  'reset-password',
  'reset-second-factor',
  'revoke-tokens',
  'set-role',
  'suspend',
  'reactivate',
];

test('svc accounts and each subcommand answer --help; mistakes are usage errors (exit 2) with the usage', async () => {
  const help = await svc(['accounts', '--help']);
  assert.equal(help.code, 0);
  for (const sub of SUBCOMMANDS) assert.match(help.stdout, new RegExp(`^  ${sub} `, 'm'), `${sub} is listed`);
  assert.match((await svc(['--help'])).stdout, /^ {2}accounts <subcommand> /m, 'svc --help lists it');
  for (const sub of SUBCOMMANDS) {
    const { code, stdout } = await svc(['accounts', sub, '--help']);
    assert.equal(code, 0, sub);
    assert.match(stdout, new RegExp(`^Usage: svc accounts ${sub}`), sub);
  }
  assert.match((await svc(['accounts', 'list', '--help'])).stdout, /second factors \("TOTP, 2 passkeys",/);
  assert.match((await svc(['accounts', 'list', '--help'])).stdout, /"secondFactors"/);
  assert.match(
    (await svc(['accounts', 'reset-second-factor', '--help'])).stdout,
    /Clears every second factor of the account \(its TOTP and every passkey\)/,
  );
  // Refused before any database is opened: DATABASE_URL names nothing usable.
  const env = { DATABASE_URL: '/nonexistent-dir/never.sqlite' };
  const usage: [string[], RegExp][] = [
    [[], /^svc accounts: name a subcommand\.\n\nUsage: svc accounts <subcommand>/],
    [['rename', 'bob'], /^svc accounts: unknown subcommand "rename"\.\n\nUsage: svc accounts <subcommand>/],
    [
      ['set-role', 'bob', 'owner'],
      /^svc accounts set-role: the role must be admin or viewer, not "owner"\.\n\nUsage: svc accounts set-role <username> admin\|viewer/,
    ],
    [['set-role', 'bob'], /^svc accounts set-role: name the role: admin or viewer\./],
    [
      ['suspend'],
      /^svc accounts suspend: name the account \(its username\)\.\n\nUsage: svc accounts suspend <username>/,
    ],
    [['reactivate', '  '], /^svc accounts reactivate: name the account/],
    [['reset-password', 'bob', 'alice'], /^svc accounts reset-password: unexpected argument "alice"\./],
    [['list', 'bob'], /^svc accounts list: unexpected argument "bob"\./],
    [
      ['revoke-tokens'],
      /^svc accounts revoke-tokens: name the account \(its username\)\.\n\nUsage: svc accounts revoke-tokens <username>/,
    ],
    [['revoke-tokens', 'bob', 'alice'], /^svc accounts revoke-tokens: unexpected argument "alice"\./],
    [['reset-second-factor', '--force', 'bob'], /^svc accounts reset-second-factor: Unknown option '--force'/],
  ];
  for (const [args, message] of usage) {
    const { code, stdout, stderr } = await svc(['accounts', ...args], env);
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, message, args.join(' '));
    assert.equal(stdout, '', args.join(' '));
  }
});

forEachDialect((getDb) => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeEach(async () => {
    for (const table of [
      'sessions',
      'password_resets',
      'recovery_codes',
      'api_tokens',
      'passkeys',
      'accounts',
    ] as const)
      await getDb().db.deleteFrom(table).execute();
    t = buildTestApp(getDb());
    env = { DATABASE_URL: databaseUrlOf(getDb()) };
  });
  const accounts =
    (env2: Record<string, string> = {}) =>
    (...args: string[]) =>
      svc(['accounts', ...args], { ...env, ...env2 });
  const row = (id: string) =>
    t.deps.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** A refusal: exit 1, nothing on stdout, one line on stderr. */
  const assertRefused = (run: { code: number; stdout: string; stderr: string }, line: RegExp) => {
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, line);
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, 'one line');
  };

  test('svc accounts list: an aligned table, or --json; no hash or secret', async () => {
    const empty = await accounts()('list');
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /^No accounts yet\./);
    assert.equal((await accounts()('list', '--json')).stdout, '[]\n');

    const alice = await buildAccount(t, { username: 'Alice', role: 'admin' });
    const bob = await buildAccount(t, { username: 'bob' });
    await buildAccount(t, { username: 'Zoë' });
    const signedIn = Date.UTC(2026, 0, 14, 9, 30, 15);
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_enabled: 1, totp_secret: 'JBSWY3DPEHPK3PXP', last_sign_in_at: signedIn })
      .where('id', '=', alice.id)
      .execute();
    await t.deps.db.updateTable('accounts').set({ suspended_at: signedIn }).where('id', '=', bob.id).execute();
    const keys = [...(await buildPasskeys(t, alice.id, 2)), ...(await buildPasskeys(t, bob.id, 1))];

    const { code, stdout } = await accounts()('list');
    assert.equal(code, 0);
    assert.equal(
      stdout,
      'USERNAME  ROLE    STATE      SECOND FACTOR     LAST SIGN-IN\n' +
        'Alice     admin   active     TOTP, 2 passkeys  2026-01-14 09:30 UTC\n' +
        'bob       viewer  suspended  1 passkey         never\n' +
        'Zoë       viewer  active     None              never\n',
    );
    const json = await accounts()('list', '--json');
    assert.equal(json.code, 0);
    assert.deepEqual(JSON.parse(json.stdout), [
      {
        username: 'Alice',
        role: 'admin',
        state: 'active',
        secondFactor: 'enrolled',
        secondFactors: ['totp', 'passkey'],
        lastSignIn: '2026-01-14T09:30:15.000Z',
      },
      {
        username: 'bob',
        role: 'viewer',
        state: 'suspended',
        secondFactor: 'enrolled',
        secondFactors: ['passkey'],
        lastSignIn: null,
      },
      { username: 'Zoë', role: 'viewer', state: 'active', secondFactor: 'none', secondFactors: [], lastSignIn: null },
    ]);
    const hash = (await row(alice.id)).password_hash;
    for (const out of [stdout, json.stdout]) {
      assert.ok(
        !out.includes(hash) && !out.includes('argon2') && !out.includes('JBSWY3DPEHPK3PXP'),
        'no hash or secret',
      );
      for (const key of keys)
        assert.ok(!out.includes(key.credential_id) && !out.includes(key.public_key), 'no passkey id or key');
    }
  });

  test('suspend and reactivate: sessions end, "already so" answers exit 0, the last active admin is refused', async () => {
    const alice = await buildAccount(t, { username: 'Alice', role: 'admin' });
    const bob = await buildAccount(t, { username: 'bob' });
    await signIn(t, bob);
    const run = accounts();

    assertRefused(
      await run('suspend', 'alice'),
      /^svc accounts suspend: Alice: That is the last active administrator\. Promote another account first\. Nothing changed\./,
    );
    assert.equal((await row(alice.id)).suspended_at, null);
    assertRefused(
      await run('suspend', 'carol'),
      /^svc accounts suspend: no account is named "carol" \(svc accounts list shows them\)\.\n$/,
    );

    const suspended = await run('suspend', 'BOB');
    assert.equal(suspended.code, 0, suspended.stderr);
    assert.match(suspended.stdout, /^bob is suspended: its sessions ended; it cannot sign in/);
    assert.notEqual((await row(bob.id)).suspended_at, null);
    const sessions = await t.deps.db
      .selectFrom('sessions')
      .select('id_hash')
      .where('account_id', '=', bob.id)
      .execute();
    assert.deepEqual(sessions, [], 'its sessions ended');
    assert.match(
      suspended.stderr,
      /"event":"account-suspended".*"actor":"cli"/,
      'logged with the command line as actor',
    );
    const again = await run('suspend', 'bob');
    assert.equal(again.code, 0);
    assert.equal(again.stdout, 'bob was already suspended; nothing changed.\n');

    const reactivated = await run('reactivate', 'bob');
    assert.equal(reactivated.code, 0, reactivated.stderr);
    assert.match(reactivated.stdout, /^bob is reactivated: it can sign in again/);
    assert.equal((await row(bob.id)).suspended_at, null);
    assert.equal((await run('reactivate', 'bob')).stdout, 'bob is already active; nothing changed.\n');
    assertRefused(await run('reactivate', 'carol'), /no account is named "carol"/);

    // With a second active admin, the first may be suspended; a suspended admin does not count as the last one.
    assert.equal((await run('set-role', 'bob', 'admin')).code, 0);
    assert.equal((await run('suspend', 'Alice')).code, 0);
    assertRefused(await run('suspend', 'bob'), /^svc accounts suspend: bob: That is the last active administrator\./);
    assert.equal((await row(bob.id)).suspended_at, null);
  });

  test('set-role: promotes and demotes, says when nothing changes, never demotes the last active admin', async () => {
    const alice = await buildAccount(t, { username: 'Alice', role: 'admin' });
    const bob = await buildAccount(t, { username: 'bob' });
    const run = accounts();

    assertRefused(
      await run('set-role', 'alice', 'viewer'),
      /^svc accounts set-role: Alice: That would leave no active administrator\. Promote another account first\. Nothing changed\./,
    );
    assert.equal((await row(alice.id)).role, 'admin');
    assertRefused(await run('set-role', 'carol', 'admin'), /no account is named "carol"/);

    const promoted = await run('set-role', 'Bob', 'admin');
    assert.equal(promoted.code, 0, promoted.stderr);
    assert.equal(promoted.stdout, "bob is now an admin. It applies from that account's next request.\n");
    assert.equal((await row(bob.id)).role, 'admin');
    assert.equal((await run('set-role', 'bob', 'admin')).stdout, 'bob already has the role admin; nothing changed.\n');

    const demoted = await run('set-role', 'alice', 'viewer');
    assert.equal(demoted.code, 0, demoted.stderr);
    assert.equal(demoted.stdout, "Alice is now a viewer. It applies from that account's next request.\n");
    assert.equal((await row(alice.id)).role, 'viewer');
  });

  test('reset-second-factor clears the TOTP secret and every passkey and voids the recovery codes; the password stays', async () => {
    const alice = await buildAccount(t, { username: 'Alice', role: 'admin' });
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_enabled: 1, totp_secret: 'JBSWY3DPEHPK3PXP', totp_last_step: 42 })
      .where('id', '=', alice.id)
      .execute();
    await t.deps.db
      .insertInto('recovery_codes')
      .values({ id: 'rc-1', account_id: alice.id, code_hash: sha256('code'), used_at: null, created_at: t.clock.now() })
      .execute();
    await buildPasskeys(t, alice.id, 2);
    const bob = await buildAccount(t, { username: 'bob' });
    await buildPasskeys(t, bob.id, 1);
    const before = await row(alice.id);

    const { code, stdout, stderr } = await accounts()('reset-second-factor', 'alice');
    assert.equal(code, 0, stderr);
    assert.equal(
      stdout,
      "Alice's second factor is cleared (TOTP, 2 passkeys removed) and its recovery codes are void. It enrols at its next sign-in; its password and sessions are unchanged.\n",
    );
    assert.match(stderr, /"event":"second-factor-reset".*"cleared":\{"totp":true,"passkeys":2\}/);
    assert.equal(await passkeysOf(t, alice.id), 0, 'every passkey of hers is gone');
    assert.equal(await passkeysOf(t, bob.id), 1, 'another account’s stays');
    const after = await row(alice.id);
    assert.deepEqual(
      [after.totp_enabled, after.totp_secret, after.totp_last_step, after.totp_enrol_prompt],
      [0, null, null, 1],
    );
    assert.equal(after.password_hash, before.password_hash);
    assert.deepEqual(
      await t.deps.db.selectFrom('recovery_codes').select('id').where('account_id', '=', alice.id).execute(),
      [],
    );
    assert.equal(
      (await accounts()('reset-second-factor', 'alice')).stdout.split('.')[0],
      'Alice had no second factor enrolled',
    );
    const passkeyOnly = await accounts()('reset-second-factor', 'bob');
    assert.match(
      passkeyOnly.stdout,
      /^bob's second factor is cleared \(1 passkey removed\) and its recovery codes are void\./,
    );
    assert.equal(await passkeysOf(t, bob.id), 0);
    assertRefused(await accounts()('reset-second-factor', 'carol'), /no account is named "carol"/);
  });

  test('reset-password prints a link that lets its holder set a password; stored as SHA-256 for 24 h; never logged', async () => {
    const vera = await buildAccount(t, { username: 'Vera' });
    await signIn(t, vera);
    const run = await accounts({ SVC_EXTERNAL_URL: 'https://svc.example.test', SVC_LOG_LEVEL: 'trace' })(
      'reset-password',
      'vera',
    );
    assert.equal(run.code, 0, run.stderr);
    const match = /^https:\/\/svc\.example\.test\/reset\?token=([A-Za-z0-9_-]{43})\n$/.exec(run.stdout);
    assert.ok(match, `only the link on stdout: ${run.stdout}`);
    const token = match[1]!;
    assert.match(
      run.stderr,
      /^svc accounts reset-password: reset link for Vera created; it works once, until \d{4}-\d\d-\d\dT[\d:.]+Z\./m,
    );
    assert.match(run.stderr, /"event":"reset-link-created"/, 'the event is logged');
    assert.ok(!run.stderr.includes(token), 'the token is in no log line nor message');

    const stored = await t.deps.db
      .selectFrom('password_resets')
      .selectAll()
      .where('account_id', '=', vera.id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.token_hash, sha256(token));
    assert.equal(stored.expires_at - stored.created_at, 24 * 3600_000);

    // The holder follows it (the test app's clock at the CLI's minting time) and chooses a password.
    t.clock.t = stored.created_at + 60_000;
    const holder = t.client();
    const page = await holder.get(`/reset?token=${token}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /Vera/);
    const done = await holder.post('/reset', { token, password: 'a brand new passphrase' });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/login?notice=password-reset');
    assert.deepEqual(
      await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', vera.id).execute(),
      [],
      'her sessions ended',
    );
    await signIn(t, { username: 'Vera', password: 'a brand new passphrase' });
    assert.ok(!t.logs.join('').includes(token), 'the token is in no log line of the service either');
    assert.equal((await holder.get(`/reset?token=${token}`)).status, 410, 'spent by its first use');

    assertRefused(
      await accounts()('reset-password', 'carol'),
      /^svc accounts reset-password: no account is named "carol"/,
    );
    assert.equal(
      await t.deps.db.selectFrom('password_resets').select('account_id').executeTakeFirst(),
      undefined,
      'nothing minted',
    );
  });

  test('reset-password for a suspended account says the link works once it is reactivated', async () => {
    const bob = await buildAccount(t, { username: 'bob' });
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', bob.id).execute();
    const run = await accounts({ PORT: '8123' })('reset-password', 'bob');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^http:\/\/localhost:8123\/reset\?token=/);
    assert.match(
      run.stderr,
      /bob is suspended: the link works only once it is reactivated \(svc accounts reactivate bob\)\./,
    );
  });

  test('revoke-tokens revokes every API token of the account, which then answers 401; the tokens are never printed', async () => {
    const bob = await buildAccount(t, { username: 'bob' });
    const one = await createToken(t.deps, bob.id, { name: 'ci', expiry: 'never' });
    const two = await createToken(t.deps, bob.id, { name: 'ro', expiry: '30', readOnly: true });
    const alice = await buildAccount(t, { username: 'alice', role: 'admin' });
    const kept = await createToken(t.deps, alice.id, { name: 'kept', expiry: 'never' });
    const me = (token: string) => t.client().get('/api/me', { authorization: `Bearer ${token}` });
    assert.equal((await me(one.token)).status, 200);

    const run = await accounts()('revoke-tokens', 'BOB');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'bob: 2 API tokens revoked; each answers 401 from now on.\n');
    assert.match(run.stderr, /"event":"api-tokens-revoked".*"actor":"cli"/, 'logged with the command line as actor');
    for (const token of [one.token, two.token]) {
      assert.equal((await me(token)).status, 401);
      assert.ok(!run.stdout.includes(token) && !run.stderr.includes(token) && !run.stderr.includes(sha256(token)));
    }
    assert.equal((await me(kept.token)).status, 200, 'another account keeps its tokens');
    const again = await accounts()('revoke-tokens', 'bob');
    assert.equal(again.code, 0);
    assert.equal(again.stdout, 'bob has no API tokens; nothing changed.\n');
    assertRefused(
      await accounts()('revoke-tokens', 'carol'),
      /^svc accounts revoke-tokens: no account is named "carol" \(svc accounts list shows them\)\.\n$/,
    );
  });
});

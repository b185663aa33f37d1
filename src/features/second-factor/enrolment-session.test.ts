// A pending TOTP enrolment belongs to the session that passed the password check: no other session of the account
// can read it, replace it or confirm it, and it expires.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { createTestDatabase, dialects, forEachDialect, migratorThrough } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import {
  atEnrolStep,
  atTotpStep,
  codesOn,
  finishEnrolment,
  keyOn,
  startEnrolmentAtSignIn,
  startEnrolmentInProfile,
} from '../../../test/helpers/second-factor.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { newFormToken } from '../auth/reveals.service.ts';
import { ENROLMENT_PENDING_MS } from './second-factor.service.ts';
import { totpCode } from './totp.ts';

const EXPIRED = '/profile?notice=enrolment-expired#profile-second-factor';
const CODES_PAGE = '/profile/recovery-codes?from=enrolment';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  const totpRow = (accountId: string) =>
    t.deps.db
      .selectFrom('accounts')
      .select(['totp_enabled', 'totp_secret'])
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
  // A fresh one-time token, as the confirming page's form carries (the pages a session sees may hold none).
  const confirm = (c: TestClient, code: string) => c.post('/profile/totp/confirm', { code, _once: newFormToken() });

  test('another session of the account can neither read nor confirm a pending secret on the profile', async () => {
    const account = await buildAccount(t);
    const victim = await signIn(t, account);
    const thief = await signIn(t, account); // e.g. a stolen cookie: never types the password
    const secret = await startEnrolmentInProfile(victim, account.password);

    await thief.get('/profile');
    const wrong = await confirm(thief, '000000');
    assert.equal(wrong.location, EXPIRED);
    const after = await thief.get(wrong.location!);
    assert.match(after.text, /The set-up expired/);
    assert.equal(keyOn(after.text), undefined);
    assert.ok(!after.text.includes(secret), 'the victim\u2019s secret is not shown');
    assert.equal((await thief.get('/profile/totp')).location, EXPIRED, 'nor on the confirming page');

    await thief.get('/profile');
    const stolen = await confirm(thief, totpCode(secret, t.clock.now()));
    assert.equal(stolen.location, EXPIRED);
    assert.deepEqual(
      await totpRow(account.id),
      { totp_enabled: 0, totp_secret: null },
      'nothing pending on the account row',
    );

    // The session that confirmed its password still completes its own enrolment after a wrong code, which keeps the
    // enrolment but does not show the key again.
    const retry = await confirm(victim, totpCode(secret, t.clock.now() + 120_000));
    assert.equal(retry.status, 400);
    assert.equal(keyOn(retry.text), undefined);
    assert.equal(codesOn(retry.text).length, 0);
    assert.equal((await finishEnrolment(t, victim, '/profile/totp/confirm', secret)).length, 10);
    assert.deepEqual(await totpRow(account.id), { totp_enabled: 1, totp_secret: secret });
  });

  test('a second start elsewhere does not replace the first session\u2019s secret; the first to confirm wins', async () => {
    const account = await buildAccount(t);
    const first = await signIn(t, account);
    const second = await signIn(t, account);
    const a = await startEnrolmentInProfile(first, account.password);
    const b = await startEnrolmentInProfile(second, account.password);
    assert.notEqual(a, b);

    assert.equal(
      (await confirm(first, totpCode(b, t.clock.now()))).status,
      400,
      'the other secret is not this session\u2019s',
    );
    assert.equal((await finishEnrolment(t, first, '/profile/totp/confirm', a)).length, 10);

    const late = await confirm(second, totpCode(b, t.clock.now()));
    assert.equal(late.location, EXPIRED);
    assert.deepEqual(await totpRow(account.id), { totp_enabled: 1, totp_secret: a });
    const pending = await t.deps.db
      .selectFrom('totp_enrolments')
      .innerJoin('sessions', 'sessions.id_hash', 'totp_enrolments.session_id_hash')
      .select('session_id_hash')
      .where('sessions.account_id', '=', account.id)
      .execute();
    assert.deepEqual(pending, [], 'every pending enrolment of the account is dropped once TOTP is on');
  });

  test('two sessions confirming their own secrets at once: exactly one turns TOTP on', async () => {
    const account = await buildAccount(t);
    const clients = [await signIn(t, account), await signIn(t, account)];
    const secrets: string[] = [];
    for (const c of clients) secrets.push(await startEnrolmentInProfile(c, account.password));
    const results = await Promise.all(clients.map((c, i) => confirm(c, totpCode(secrets[i]!, t.clock.now()))));
    assert.deepEqual(results.map((r) => r.location).sort(), [EXPIRED, CODES_PAGE].sort());
    const winner = results.findIndex((r) => r.location === CODES_PAGE);
    assert.deepEqual(await totpRow(account.id), { totp_enabled: 1, totp_secret: secrets[winner] });
    const codes = await t.deps.db
      .selectFrom('recovery_codes')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(codes.length, 10);
  });

  test('at sign-in, a pending secret is bound to the enrolment session too', async () => {
    const account = await buildAccount(t, { enrolPrompt: true });
    const enrolling = await atEnrolStep(t, account);
    const other = await atEnrolStep(t, account);
    const secret = await startEnrolmentAtSignIn(enrolling);

    const leak = await other.post('/login/enrol', { action: 'confirm', code: '000000' });
    assert.equal(leak.status, 409);
    assert.equal(keyOn(leak.text), undefined);
    const stolen = await other.post('/login/enrol', { action: 'confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(stolen.status, 409);
    assert.equal((await other.get('/')).location, '/login/enrol', 'the other session is not signed in');
    assert.equal((await totpRow(account.id)).totp_enabled, 0);

    // A new start by the other session does not touch the first one's secret.
    assert.notEqual(await startEnrolmentAtSignIn(other), secret);
    const wrong = await enrolling.post('/login/enrol', {
      action: 'confirm',
      code: totpCode(secret, t.clock.now() + 120_000),
    });
    assert.equal(wrong.status, 400);
    assert.equal(keyOn(wrong.text), undefined);
    assert.equal((await finishEnrolment(t, enrolling, '/login/enrol', secret)).length, 10);
  });

  test('a pending secret expires after 10 minutes and ends with its session', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    const secret = await startEnrolmentInProfile(c, account.password);
    t.clock.advance(ENROLMENT_PENDING_MS);
    const wrong = await confirm(c, '000000');
    assert.equal(wrong.location, EXPIRED);
    assert.equal(keyOn((await c.get(wrong.location!)).text), undefined, 'an expired secret is not shown again');
    assert.equal((await confirm(c, totpCode(secret, t.clock.now()))).location, EXPIRED);
    assert.equal((await totpRow(account.id)).totp_enabled, 0);
    const stored = () => t.deps.db.selectFrom('totp_enrolments').select('secret').execute();
    assert.equal((await stored()).length, 1);
    await housekeepOnce(t.deps);
    assert.deepEqual(await stored(), [], 'housekeeping deletes expired secrets');

    await startEnrolmentInProfile(c, account.password);
    assert.equal((await stored()).length, 1);
    await c.post('/logout');
    assert.deepEqual(await stored(), [], 'signing out drops the pending secret');
  });

  test('the confirmed secret is the one the two-factor step then asks for', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    const secret = await startEnrolmentInProfile(c, account.password);
    assert.equal((await finishEnrolment(t, c, '/profile/totp/confirm', secret)).length, 10);
    t.clock.advance(30_000);
    const step = await atTotpStep(t, account);
    assert.equal((await step.post('/login/totp', { code: totpCode(secret, t.clock.now()) })).location, '/');
  });
});

for (const dialect of dialects()) {
  test(`${dialect}: upgrading drops pending secrets left on account rows, and keeps enabled ones`, async () => {
    const tdb = await createTestDatabase(dialect, { migrate: false });
    try {
      const result = await migratorThrough(tdb.db, '0006-messages').migrateToLatest();
      assert.equal(result.error, undefined);
      const row = {
        password_hash: 'x',
        role: 'viewer',
        totp_last_step: null,
        totp_enrol_prompt: 0,
        created_at: 1,
      } as const;
      await tdb.db
        .insertInto('accounts')
        .values([
          {
            ...row,
            id: 'pending',
            username: 'pending',
            username_lower: 'pending',
            totp_secret: 'JBSWY3DPEHPK3PXP',
            totp_enabled: 0,
          },
          {
            ...row,
            id: 'enabled',
            username: 'enabled',
            username_lower: 'enabled',
            totp_secret: 'KRSXG5CTMVRXEZLU',
            totp_enabled: 1,
          },
        ])
        .execute();
      const migrated = await migrateToLatest(tdb.db);
      assert.ok(migrated.ok);
      assert.deepEqual(migrated.applied.slice(0, 5), [
        '0008-second-factor-hardening',
        '0009-delivery-due-pending',
        '0010-delivery-attempt-log',
        '0011-delivery-attempt-rows',
        '0013-username-skeleton',
      ]);
      const rows = await tdb.db
        .selectFrom('accounts')
        .select(['id', 'totp_secret', 'credentials_version'])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        { id: 'enabled', totp_secret: 'KRSXG5CTMVRXEZLU', credentials_version: 0 },
        { id: 'pending', totp_secret: null, credentials_version: 0 },
      ]);
    } finally {
      await tdb.drop();
    }
  });
}

// A pending TOTP enrolment belongs to the session that passed the password check: no other session of the account
// can read it, replace it or confirm it, and it expires.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { createTestDatabase, dialects, forEachDialect, migratorThrough } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { atEnrolStep, atTotpStep } from '../../../test/helpers/second-factor.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { ENROLMENT_PENDING_MS } from './second-factor.service.ts';
import { totpCode } from './totp.ts';

const CODE_LIST = /<li><code class="secret">([0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{5})<\/code><\/li>/g;

/** The secret shown on a page, if any. */
function secretOn(page: string): string | undefined {
  return /id="totp-secret">([A-Z2-7]+)</.exec(page)?.[1];
}

function codesOn(page: string): string[] {
  return [...page.matchAll(CODE_LIST)].map((m) => m[1]!);
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  const totpRow = (accountId: string) =>
    t.deps.db.selectFrom('accounts').select(['totp_enabled', 'totp_secret']).where('id', '=', accountId).executeTakeFirstOrThrow();

  test('another session of the account can neither read nor confirm a pending secret on the profile', async () => {
    const account = await buildAccount(t);
    const victim = await signIn(t, account);
    const thief = await signIn(t, account); // e.g. a stolen cookie: never types the password
    const started = await victim.post('/profile/totp/start', { password: account.password });
    assert.equal(started.status, 200);
    const secret = secretOn(started.text)!;

    await thief.get('/profile');
    const wrong = await thief.post('/profile/totp/confirm', { code: '000000' });
    assert.equal(wrong.status, 409);
    assert.match(wrong.text, /The set-up expired/);
    assert.equal(secretOn(wrong.text), undefined);
    assert.ok(!wrong.text.includes(secret), 'the victim\u2019s secret is not shown');

    const stolen = await thief.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now()) });
    assert.equal(stolen.status, 409);
    assert.deepEqual(codesOn(stolen.text), []);
    assert.deepEqual(await totpRow(account.id), { totp_enabled: 0, totp_secret: null }, 'nothing pending on the account row');

    // The session that gave the password still completes its own enrolment, after a wrong code shows its own secret.
    const retry = await victim.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now() + 120_000) });
    assert.equal(retry.status, 400);
    assert.equal(secretOn(retry.text), secret);
    const done = await victim.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now()) });
    assert.equal(done.status, 200);
    assert.equal(codesOn(done.text).length, 10);
    assert.deepEqual(await totpRow(account.id), { totp_enabled: 1, totp_secret: secret });
  });

  test('a second start elsewhere does not replace the first session\u2019s secret; the first to confirm wins', async () => {
    const account = await buildAccount(t);
    const first = await signIn(t, account);
    const second = await signIn(t, account);
    const a = secretOn((await first.post('/profile/totp/start', { password: account.password })).text)!;
    const b = secretOn((await second.post('/profile/totp/start', { password: account.password })).text)!;
    assert.notEqual(a, b);

    const wrong = await first.post('/profile/totp/confirm', { code: totpCode(a, t.clock.now() + 120_000) });
    assert.equal(secretOn(wrong.text), a, 'each session sees only its own secret');
    assert.equal((await first.post('/profile/totp/confirm', { code: totpCode(b, t.clock.now()) })).status, 400, 'the other secret is not this session\u2019s');
    const done = await first.post('/profile/totp/confirm', { code: totpCode(a, t.clock.now()) });
    assert.equal(done.status, 200);

    const late = await second.post('/profile/totp/confirm', { code: totpCode(b, t.clock.now()) });
    assert.equal(late.status, 409);
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
    for (const c of clients) secrets.push(secretOn((await c.post('/profile/totp/start', { password: account.password })).text)!);
    const results = await Promise.all(clients.map((c, i) => c.post('/profile/totp/confirm', { code: totpCode(secrets[i]!, t.clock.now()) })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
    const winner = results.findIndex((r) => r.status === 200);
    assert.deepEqual(await totpRow(account.id), { totp_enabled: 1, totp_secret: secrets[winner] });
    const codes = await t.deps.db.selectFrom('recovery_codes').select('id').where('account_id', '=', account.id).execute();
    assert.equal(codes.length, 10);
  });

  test('at sign-in, a pending secret is bound to the enrolment session too', async () => {
    const account = await buildAccount(t, { enrolPrompt: true });
    const enrolling = await atEnrolStep(t, account);
    const other = await atEnrolStep(t, account);
    const page = await enrolling.post('/login/enrol', { action: 'start', password: account.password });
    const secret = secretOn(page.text)!;

    const leak = await other.post('/login/enrol', { action: 'confirm', code: '000000' });
    assert.equal(leak.status, 409);
    assert.equal(secretOn(leak.text), undefined);
    const stolen = await other.post('/login/enrol', { action: 'confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(stolen.status, 409);
    assert.equal((await other.get('/')).location, '/login/enrol', 'the other session is not signed in');
    assert.equal((await totpRow(account.id)).totp_enabled, 0);

    // A new start by the other session does not touch the first one's secret.
    const replaced = await other.post('/login/enrol', { action: 'start', password: account.password });
    assert.notEqual(secretOn(replaced.text), secret);
    const wrong = await enrolling.post('/login/enrol', { action: 'confirm', code: totpCode(secret, t.clock.now() + 120_000) });
    assert.equal(secretOn(wrong.text), secret);
    const done = await enrolling.post('/login/enrol', { action: 'confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(done.status, 200);
    assert.equal(codesOn(done.text).length, 10);
  });

  test('a pending secret expires after 10 minutes and ends with its session', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    const secret = secretOn((await c.post('/profile/totp/start', { password: account.password })).text)!;
    t.clock.advance(ENROLMENT_PENDING_MS);
    const wrong = await c.post('/profile/totp/confirm', { code: '000000' });
    assert.equal(wrong.status, 409);
    assert.equal(secretOn(wrong.text), undefined, 'an expired secret is not shown again');
    assert.equal((await c.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now()) })).status, 409);
    assert.equal((await totpRow(account.id)).totp_enabled, 0);
    const stored = () => t.deps.db.selectFrom('totp_enrolments').select('secret').execute();
    assert.equal((await stored()).length, 1);
    await housekeepOnce(t.deps);
    assert.deepEqual(await stored(), [], 'housekeeping deletes expired secrets');

    await c.post('/profile/totp/start', { password: account.password });
    assert.equal((await stored()).length, 1);
    await c.post('/logout');
    assert.deepEqual(await stored(), [], 'signing out drops the pending secret');
  });

  test('the confirmed secret is the one the two-factor step then asks for', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    const secret = secretOn((await c.post('/profile/totp/start', { password: account.password })).text)!;
    assert.equal((await c.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now()) })).status, 200);
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
      const row = { password_hash: 'x', role: 'viewer', totp_last_step: null, totp_enrol_prompt: 0, created_at: 1 } as const;
      await tdb.db
        .insertInto('accounts')
        .values([
          { ...row, id: 'pending', username: 'pending', username_lower: 'pending', totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 0 },
          { ...row, id: 'enabled', username: 'enabled', username_lower: 'enabled', totp_secret: 'KRSXG5CTMVRXEZLU', totp_enabled: 1 },
        ])
        .execute();
      assert.deepEqual(await migrateToLatest(tdb.db), { ok: true, applied: ['0008-second-factor-hardening', '0009-delivery-due-pending', '0010-delivery-attempt-log', '0011-delivery-attempt-rows', '0013-username-skeleton'] });
      const rows = await tdb.db.selectFrom('accounts').select(['id', 'totp_secret', 'credentials_version']).orderBy('id').execute();
      assert.deepEqual(rows, [
        { id: 'enabled', totp_secret: 'KRSXG5CTMVRXEZLU', credentials_version: 0 },
        { id: 'pending', totp_secret: null, credentials_version: 0 },
      ]);
    } finally {
      await tdb.drop();
    }
  });
}

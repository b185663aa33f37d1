import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signedInAs } from '../../../test/helpers/factories.ts';
import {
  atEnrolStep,
  atTotpStep,
  codesOn,
  enrolTotp,
  finishEnrolment,
  keyOn,
  startEnrolmentAtSignIn,
} from '../../../test/helpers/second-factor.ts';
import { totpCode, totpStep } from './totp.ts';

/** The key shown on the enrolment page. */
function secretOn(page: string): string {
  const key = keyOn(page);
  assert.ok(key, 'the page shows the key');
  return key;
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  test('the first sign-in offers enrolment; the pending session reaches nothing else; skipping clears the offer', async () => {
    const account = await buildAccount(t, { enrolPrompt: true });
    const c = await atEnrolStep(t, account);
    for (const path of ['/', '/profile', '/settings', '/login/totp']) {
      assert.equal((await c.get(path)).location, '/login/enrol', path);
    }
    assert.equal((await c.get('/api/me')).status, 401);
    const offer = await c.get('/login/enrol');
    assert.equal(offer.status, 200);
    assert.match(offer.text, /Skip for now/);
    const skipped = await c.post('/login/enrol', { action: 'skip' });
    assert.equal(skipped.location, '/');
    assert.equal((await c.get('/')).status, 200);
    const row = await t.deps.db
      .selectFrom('accounts')
      .select(['totp_enrol_prompt', 'totp_enabled'])
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { totp_enrol_prompt: 0, totp_enabled: 0 });
    const again = t.client();
    await again.get('/login');
    assert.equal(
      (await again.post('/login', { username: account.username, password: account.password })).location,
      '/',
    );
  });

  test('enrolment at sign-in asks no password again; the key is shown once after a redirect, the codes once after the last', async () => {
    const account = await buildAccount(t, { enrolPrompt: true });
    const c = await atEnrolStep(t, account);
    const offer = await c.get('/login/enrol');
    assert.doesNotMatch(offer.text, /type="password"/, 'the password typed moments ago is not asked again');

    const start = await c.post('/login/enrol', { action: 'start' });
    assert.equal(start.status, 303);
    assert.equal(start.location, '/login/enrol');
    const page = await c.get('/login/enrol');
    const secret = secretOn(page.text);
    assert.equal(secret.length, 32, '160 bits in base32');
    assert.match(page.text, /id="totp-secret">([A-Z2-7]{4} ){7}[A-Z2-7]{4}</, 'grouped in fours');
    assert.match(page.text, /<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<path /s);
    assert.ok(
      page.text.includes(`<a href="otpauth://totp/svc:${account.username}?issuer=svc&amp;secret=${secret}`),
      'the set-up link is a link',
    );
    assert.doesNotMatch(page.text, /<script|style=/i);

    // A reload shows the key no more (the set-up goes on); neither does a wrong code.
    const reload = await c.get('/login/enrol');
    assert.equal(keyOn(reload.text), undefined);
    assert.ok(!reload.text.includes(secret));
    assert.match(reload.text, /shown once/);
    const bad = await c.post('/login/enrol', { action: 'confirm', code: totpCode(secret, t.clock.now() + 120_000) });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /not valid/);
    assert.ok(!bad.text.includes(secret), 'a wrong code does not show the key again');
    assert.equal((await c.get('/')).location, '/login/enrol');

    const done = await c.post('/login/enrol', { action: 'confirm', code: totpCode(secret, t.clock.now()) });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/profile/recovery-codes?from=sign-in');
    const shown = await c.get(done.location!);
    const codes = codesOn(shown.text);
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    assert.match(shown.text, /<a href="\/">Continue<\/a>/);
    assert.equal(codesOn((await c.get(done.location!)).text).length, 0, 'a reload shows the codes no more');
    assert.equal((await c.get('/')).status, 200, 'the session is signed in');

    const row = await t.deps.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.totp_enabled, 1);
    assert.equal(row.totp_enrol_prompt, 0);
    assert.equal(row.totp_last_step, totpStep(t.clock.now()));
    const stored = await t.deps.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(stored.length, 10);
    for (const { code_hash } of stored) {
      assert.match(code_hash, /^hmac-sha256\$/);
      assert.ok(codes.every((code) => !code_hash.includes(code.replaceAll('-', '')) && !code_hash.includes(code)));
    }
    const profile = await c.get('/profile');
    assert.match(profile.text, /10 of 10/);
    assert.ok(
      codes.every((code) => !profile.text.includes(code)),
      'codes are never shown again',
    );
  });

  test('a code is accepted once, never an older step after a newer one, within one step of drift', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    const first = await atTotpStep(t, account);
    for (const path of ['/', '/profile', '/login/enrol'])
      assert.equal((await first.get(path)).location, '/login/totp', path);

    // The code that confirmed enrolment (previous step, still inside the window) was already used.
    assert.equal((await first.post('/login/totp', { code: totpCode(secret, t.clock.now() - 30_000) })).status, 401);
    const code = totpCode(secret, t.clock.now());
    assert.equal((await first.post('/login/totp', { code })).location, '/');
    assert.equal((await first.get('/')).status, 200);

    const second = await atTotpStep(t, account);
    const replay = await second.post('/login/totp', { code });
    assert.equal(replay.status, 401);
    assert.match(replay.text, /not valid/);
    assert.equal((await second.get('/')).location, '/login/totp');

    // Two steps ahead is outside the window; one step ahead is inside and becomes the newest accepted step.
    assert.equal((await second.post('/login/totp', { code: totpCode(secret, t.clock.now() + 60_000) })).status, 401);
    assert.equal((await second.post('/login/totp', { code: totpCode(secret, t.clock.now() + 30_000) })).location, '/');
    // The current step is now older than the accepted one, though it is inside the window.
    const third = await atTotpStep(t, account);
    t.clock.advance(5_000);
    assert.equal((await third.post('/login/totp', { code: totpCode(secret, t.clock.now()) })).status, 401);
    t.clock.advance(30_000);
    assert.equal(
      (await third.post('/login/totp', { code: totpCode(secret, t.clock.now()) })).status,
      401,
      'that step was accepted already',
    );
    t.clock.advance(30_000);
    assert.equal(
      (await third.post('/login/totp', { code: ` ${totpCode(secret, t.clock.now()).replace(/^(...)/, '$1 ')} ` }))
        .location,
      '/',
    );
  });

  test('racing submissions of one code or one recovery code give exactly one success', async () => {
    const account = await buildAccount(t);
    const { secret, recoveryCodes } = await enrolTotp(t, account);
    const clients = await Promise.all([1, 2, 3, 4].map(() => atTotpStep(t, account)));
    const code = totpCode(secret, t.clock.now());
    const results = await Promise.all(clients.map((c) => c.post('/login/totp', { code })));
    assert.deepEqual(results.map((r) => r.status).sort(), [303, 401, 401, 401]);
    assert.equal(results.filter((r) => r.location === '/').length, 1);

    const more = await Promise.all([1, 2, 3].map(() => atTotpStep(t, account)));
    const recovered = await Promise.all(more.map((c) => c.post('/login/totp', { code: recoveryCodes[0]! })));
    assert.deepEqual(recovered.map((r) => r.status).sort(), [303, 401, 401]);
    const used = await t.deps.db
      .selectFrom('recovery_codes')
      .select('id')
      .where('account_id', '=', account.id)
      .where('used_at', 'is not', null)
      .execute();
    assert.equal(used.length, 1);
  });

  test('a recovery code signs in once, however it is typed; the profile then shows how many are left', async () => {
    const account = await buildAccount(t);
    const { recoveryCodes } = await enrolTotp(t, account);
    const c = await atTotpStep(t, account);
    const res = await c.post('/login/totp', { code: ` ${recoveryCodes[3]!.toUpperCase().replaceAll('-', ' ')} ` });
    assert.equal(res.location, '/profile?notice=recovery-code-used');
    const profile = await c.get(res.location!);
    assert.match(profile.text, /9 of 10/);
    assert.match(profile.text, /signed in with a recovery code/);

    const again = await atTotpStep(t, account);
    assert.equal((await again.post('/login/totp', { code: recoveryCodes[3]! })).status, 401);
    assert.equal((await again.post('/login/totp', { code: 'zzzzz-zzzzz-zzzzz' })).status, 401);
    assert.equal(
      (await again.post('/login/totp', { code: recoveryCodes[4]! })).location,
      '/profile?notice=recovery-code-used',
    );
  });

  test('the pending state is short-lived', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    const c = await atTotpStep(t, account);
    t.clock.advance(10 * 60_000);
    const res = await c.post('/login/totp', { code: totpCode(secret, t.clock.now()) });
    assert.equal(res.location, '/login');
    assert.equal((await c.get('/')).location, '/login');
  });

  test('an admin re-enrolment, or enrolment elsewhere, under a pending session starts sign-in over', async () => {
    const enrolled = await buildAccount(t);
    const { secret, recoveryCodes } = await enrolTotp(t, enrolled);
    const owing = await atTotpStep(t, enrolled);
    // An administrator's re-enrolment clears the secret and flag and asks for enrolment at the next sign-in.
    const admin = await signedInAs(t, 'admin');
    assert.match(
      (await admin.client.post('/settings/accounts/reenroll', { account: enrolled.id })).location ?? '',
      /notice=reenrolled$/,
    );
    const res = await owing.post('/login/totp', { code: totpCode(secret, t.clock.now()) });
    assert.equal(res.location, '/login?notice=session-ended');
    assert.equal((await owing.get('/')).location, '/login');
    // The next sign-in walks through enrolment again; the old recovery codes are void.
    const next = await atEnrolStep(t, enrolled);
    assert.equal((await finishEnrolment(t, next, '/login/enrol', await startEnrolmentAtSignIn(next))).length, 10);
    t.clock.advance(30_000);
    assert.equal((await (await atTotpStep(t, enrolled)).post('/login/totp', { code: recoveryCodes[0]! })).status, 401);

    // Enrolment completed elsewhere while this session sat at the enrolment offer: skipping must not sign it in.
    const offered = await buildAccount(t, { enrolPrompt: true });
    const sitting = await atEnrolStep(t, offered);
    await enrolTotp(t, offered);
    assert.equal((await sitting.post('/login/enrol', { action: 'skip' })).location, '/login?notice=session-ended');
    assert.equal((await sitting.get('/')).location, '/login');
  });
});

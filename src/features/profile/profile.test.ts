import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, signedInAs } from '../../../test/helpers/factories.ts';
import { confirmItsMe, submitMinting } from '../../../test/helpers/once.ts';
import {
  atTotpStep,
  codesOn,
  enrolTotp,
  keyOn,
  signInWithTotp,
  startEnrolmentInProfile,
} from '../../../test/helpers/second-factor.ts';
import { newFormToken } from '../auth/reveals.service.ts';
import { totpCode } from '../second-factor/totp.ts';
import { profileSections } from './sections.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    t = buildTestApp(getDb());
  });

  test('a viewer sees every section, and no session hash or cookie appears in the page', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const page = await client.get('/profile');
    assert.equal(page.status, 200);
    assert.deepEqual(
      profileSections.map((s) => s.key),
      ['password', 'confirm', 'second-factor', 'passkeys', 'sso', 'tokens', 'sessions'],
    );
    for (const s of profileSections) assert.ok(page.text.includes(`id="profile-${s.key}"`), s.key);
    for (const heading of [
      'Password',
      'Confirm it’s you',
      'Two-factor authentication',
      'Single sign-on',
      'API tokens',
      'Sessions',
    ])
      assert.match(page.text, new RegExp(`<h2>${heading}</h2>`));
    const rows = await t.deps.db
      .selectFrom('sessions')
      .select(['id_hash', 'public_id'])
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(rows.length, 1);
    assert.ok(!page.text.includes(rows[0]!.id_hash));
    assert.ok(page.text.includes(rows[0]!.public_id));
    for (const cookie of client.cookies.values()) assert.ok(!page.text.includes(cookie));
    for (const notice of ['constructor', '__proto__', 'nonsense'])
      assert.equal((await client.get(`/profile?notice=${notice}`)).status, 200);
  });

  test('changing the password needs the current one and the 8-72 rule, and ends only the other sessions', async () => {
    const account = await buildAccount(t);
    const here = await signIn(t, account);
    const elsewhere = await signIn(t, account);

    const wrong = await here.post('/profile/password', {
      current: 'not the password',
      password: 'a new long password',
    });
    assert.equal(wrong.status, 401);
    assert.match(
      wrong.text,
      /id="password-change-current-error">Incorrect password/,
      'the error sits beside the field',
    );
    assert.match(wrong.text, /class="error-summary"/);
    for (const [password, message] of [
      ['short', /at least 8 characters/],
      ['p'.repeat(73), /at most 72 characters/],
      ['😀'.repeat(73), /at most 72 characters/],
    ] as const) {
      const res = await here.post('/profile/password', { current: account.password, password });
      assert.equal(res.status, 400);
      assert.match(res.text, message);
    }
    assert.equal((await elsewhere.get('/')).status, 200, 'refused changes end nothing');

    const next = '😀'.repeat(72);
    const ok = await here.post('/profile/password', { current: account.password, password: next });
    assert.equal(ok.location, '/profile?notice=password-changed');
    assert.match((await here.get(ok.location!)).text, /Your password is changed/);
    assert.equal((await here.get('/')).status, 200, 'this session stays');
    assert.equal((await elsewhere.get('/')).location, '/login', 'the other session ended');

    const old = t.client();
    await old.get('/login');
    assert.equal((await old.post('/login', { username: account.username, password: account.password })).status, 401);
    await signIn(t, { username: account.username, password: next });
  });

  test('wrong current passwords on the profile count against the sign-in throttle', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    for (let i = 0; i < 5; i++)
      await c.post('/profile/password', { current: 'wrong password', password: 'a new long password' });
    const locked = await c.post('/profile/password', { current: account.password, password: 'a new long password' });
    assert.equal(locked.status, 429);
    const login = t.client();
    await login.get('/login');
    assert.equal((await login.post('/login', { username: account.username, password: account.password })).status, 429);
  });

  test('enrolment and new recovery codes need "Confirm it\u2019s you"; codes show once, download as text, and a new set voids the old', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    const profile = await c.get('/profile');
    assert.match(profile.text, /Status: <span class="badge">off<\/span>/);
    assert.ok(!profile.text.includes('id="totp-start"'), 'setting up waits for the confirmation');
    assert.equal(
      (await c.post('/profile/totp/start', { _once: newFormToken() })).location,
      '/profile?notice=confirm-first-second-factor#profile-second-factor',
    );
    assert.equal((await t.deps.db.selectFrom('totp_enrolments').select('secret').execute()).length, 0);
    const wrong = await c.post('/profile/reauth', { secret: 'wrong password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /id="confirm-secret-error">Incorrect password/);

    const secret = await startEnrolmentInProfile(c, account.password);
    // A reload or Back shows the key no more; the set-up goes on.
    const reload = await c.get('/profile/totp');
    assert.equal(keyOn(reload.text), undefined);
    assert.match(reload.text, /shown once/);
    assert.equal(
      (await c.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now() - 90_000) })).status,
      400,
    );
    const done = await c.post('/profile/totp/confirm', { code: totpCode(secret, t.clock.now()) });
    assert.equal(done.location, '/profile/recovery-codes?from=enrolment');
    const firstPage = await c.get(done.location!);
    const first = codesOn(firstPage.text);
    assert.equal(first.length, 10);
    assert.match(firstPage.text, /Two-factor authentication is on/);
    assert.equal(codesOn((await c.get(done.location!)).text).length, 0, 'a reload shows the codes no more');
    assert.match((await c.get('/profile')).text, /10 of 10/);
    // Starting again while enrolled changes nothing.
    assert.equal((await c.post('/profile/totp/start', { _once: newFormToken() })).location, '/profile');
    const row = await t.deps.db
      .selectFrom('accounts')
      .select('totp_secret')
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.totp_secret, secret);

    // The download answers the codes the page holds as a text file, and nothing that is not a set of codes.
    const download = await c.post('/profile/recovery-codes/download', { code: first });
    assert.equal(download.status, 200);
    assert.match(download.headers.get('content-type') ?? '', /^text\/plain; charset=utf-8/);
    assert.equal(download.headers.get('content-disposition'), 'attachment; filename="svc-recovery-codes.txt"');
    assert.match(download.text, new RegExp(`^svc recovery codes for ${account.username}\n`));
    assert.ok(first.every((code, i) => download.text.includes(`${String(i + 1).padStart(2, ' ')}. ${code}\n`)));
    for (const code of [[], ['not a code'], [...first, first[0]!]]) {
      assert.equal((await c.post('/profile/recovery-codes/download', { code })).status, 400, JSON.stringify(code));
    }

    // Within the 10 minutes of the confirmation, new codes need no second confirmation; after them they do.
    const regenerated = await c.post('/profile/recovery-codes');
    assert.equal(regenerated.location, '/profile/recovery-codes?from=profile');
    const second = codesOn((await c.get(regenerated.location!)).text);
    assert.equal(second.length, 10);
    assert.ok(second.every((code) => !first.includes(code)));
    t.clock.advance(10 * 60_000);
    await c.get('/profile');
    assert.equal(
      (await c.post('/profile/recovery-codes', { _once: newFormToken() })).location,
      '/profile?notice=confirm-first-second-factor#profile-second-factor',
    );
    assert.equal(
      await t.deps.db
        .selectFrom('recovery_codes')
        .select('id')
        .where('used_at', 'is', null)
        .execute()
        .then((r) => r.length),
      10,
    );

    t.clock.advance(30_000);
    assert.equal(
      (await (await atTotpStep(t, account)).post('/login/totp', { code: first[0]! })).status,
      401,
      'the old set is void',
    );
    const ok = await (await atTotpStep(t, account)).post('/login/totp', { code: second[0]! });
    assert.equal(ok.location, '/profile?notice=recovery-code-used');
  });

  test('one "Confirm it\u2019s you" form on the page serves the second factor and tokens; a failure shows there; 10 minutes later it asks again', async () => {
    const account = await buildAccount(t);
    const c = await signIn(t, account);
    const confirmForms = (text: string) => text.match(/<form[^>]*action="\/profile\/reauth"/g)?.length ?? 0;
    const passwordFields = (text: string) => text.match(/type="password"/g)?.length ?? 0;
    const sectionOf = (text: string, key: string) =>
      text.slice(text.indexOf(`id="profile-${key}"`)).split('class="profile-section"')[0]!;

    const before = (await c.get('/profile')).text;
    assert.equal(confirmForms(before), 1, 'one confirm form');
    assert.equal(passwordFields(before), 3, 'the password change (two) and the one confirmation');
    assert.match(sectionOf(before, 'confirm'), /<form method="post" action="\/profile\/reauth" id="confirm">/);
    assert.match(
      sectionOf(before, 'confirm'),
      /creating API tokens ask for your password again\. Confirming lasts 10 minutes/,
    );
    for (const [key, act] of [
      ['second-factor', 'set up two-factor authentication'],
      ['tokens', 'create a token'],
    ] as const) {
      assert.match(
        sectionOf(before, key),
        new RegExp(`<a href="#profile-confirm">Confirm it’s you</a> above to ${act}\\.`),
        key,
      );
    }
    assert.ok(
      !before.includes('id="totp-start"') && !before.includes('id="token-mint"'),
      'no act before the confirmation',
    );
    // The rule is the services': posts from this page anyway mint nothing.
    assert.equal(
      (await c.post('/profile/tokens', { name: 'sneaky', _once: newFormToken() })).location,
      '/profile?notice=confirm-first-tokens#profile-tokens',
    );
    assert.equal(
      (await c.post('/profile/totp/start', { _once: newFormToken() })).location,
      '/profile?notice=confirm-first-second-factor#profile-second-factor',
    );
    assert.equal((await t.deps.db.selectFrom('api_tokens').select('id').execute()).length, 0);

    const wrong = await c.post('/profile/reauth', { secret: 'wrong password' });
    assert.equal(wrong.status, 401);
    assert.equal(confirmForms(wrong.text), 1);
    assert.match(
      sectionOf(wrong.text, 'confirm'),
      /<div class="error-summary" role="alert"[^>]*>.*<a href="#confirm-secret">Incorrect password\.<\/a>/s,
    );
    assert.match(sectionOf(wrong.text, 'confirm'), /id="confirm-secret-error">Incorrect password\./);

    const ok = await c.post('/profile/reauth', { secret: account.password });
    assert.equal(ok.location, '/profile?notice=confirmed#profile-confirm');
    const after = (await c.get(ok.location!)).text;
    assert.match(
      sectionOf(after, 'confirm'),
      /<div class="notice success" role="status">Confirmed\. For the next 10 minutes this session can change your/,
    );
    assert.equal(confirmForms(after), 0, 'the confirm form is gone');
    assert.ok(!after.includes('href="#profile-confirm"'), 'and so are the hints');
    assert.match(sectionOf(after, 'second-factor'), /id="totp-start"/);
    assert.match(sectionOf(after, 'tokens'), /id="token-mint"/);
    assert.ok(
      !(await c.get('/profile')).text.includes('id="profile-confirm"'),
      'without its notice the confirmed step leaves nothing',
    );

    t.clock.advance(10 * 60_000);
    const later = (await c.get('/profile')).text;
    assert.equal(confirmForms(later), 1, 'it asks again');
    assert.ok(!later.includes('id="totp-start"') && !later.includes('id="token-mint"'));
  });

  test('a replayed regeneration mints no second set, and the codes never appear on a later page', async () => {
    const account = await buildAccount(t);
    const { secret } = await enrolTotp(t, account);
    const c = await signInWithTotp(t, account, secret);
    await confirmItsMe(c, account.password, 'second-factor');
    const { post, page, once } = await submitMinting(c, '/profile', '/profile/recovery-codes');
    assert.equal(post.location, '/profile/recovery-codes?from=profile');
    const codes = codesOn(page!.text);
    assert.equal(codes.length, 10);
    const hashes = async () =>
      (await t.deps.db.selectFrom('recovery_codes').select('code_hash').where('account_id', '=', account.id).execute())
        .map((r) => r.code_hash)
        .sort();
    const before = await hashes();
    const replay = await c.post('/profile/recovery-codes', { _once: once });
    assert.equal(replay.location, '/profile/recovery-codes?from=profile');
    assert.deepEqual(await hashes(), before, 'no second set');
    for (const path of [replay.location!, '/profile', '/', '/profile/recovery-codes']) {
      const text = (await c.get(path)).text;
      assert.ok(
        codes.every((code) => !text.includes(code)),
        path,
      );
    }
  });

  test('a control character in the one-time token of "Set up" or "New recovery codes" is refused (400) in the section, minting nothing', async () => {
    const plain = await buildAccount(t);
    const c = await signIn(t, plain);
    await confirmItsMe(c, plain.password, 'second-factor');
    const enrolled = await buildAccount(t);
    const { secret } = await enrolTotp(t, enrolled);
    const e = await signInWithTotp(t, enrolled, secret);
    await confirmItsMe(e, enrolled.password, 'second-factor');
    const codesBefore = await t.deps.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('account_id', '=', enrolled.id)
      .execute();
    for (const [client, path] of [
      [c, '/profile/totp/start'],
      [e, '/profile/recovery-codes'],
    ] as const) {
      for (const bad of ['\u0000', '\u001b', '\n']) {
        const res = await client.post(path, { _once: `${newFormToken()}${bad}` });
        assert.equal(res.status, 400, `${path} ${JSON.stringify(bad)}`);
        assert.match(res.text, /id="profile-second-factor"[\s\S]*This value cannot contain control characters\./, path);
      }
    }
    assert.equal(
      (await t.deps.db.selectFrom('totp_enrolments').select('secret').execute()).length,
      0,
      'no set-up started',
    );
    const codesAfter = await t.deps.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('account_id', '=', enrolled.id)
      .execute();
    assert.deepEqual(codesAfter, codesBefore, 'no new set');
    // The same forms with a clean token still act.
    assert.equal((await submitMinting(c, '/profile', '/profile/totp/start')).post.location, '/profile/totp');
    assert.equal(
      (await submitMinting(e, '/profile', '/profile/recovery-codes')).post.location,
      '/profile/recovery-codes?from=profile',
    );
  });

  test('own sessions: listed with their browser, any can be ended, a foreign or stale id is a no-op', async () => {
    const account = await buildAccount(t);
    const here = t.client();
    here.userAgent = 'Browser-Here/1.0';
    await here.get('/login');
    await here.post('/login', { username: account.username, password: account.password });
    const there = t.client();
    there.userAgent = 'Browser-There/2.0 <b>';
    await there.get('/login');
    await there.post('/login', { username: account.username, password: account.password });
    const stranger = await signedInAs(t, 'viewer');

    const page = await here.get('/profile');
    assert.match(page.text, /Browser-Here\/1\.0/);
    assert.match(page.text, /Browser-There\/2\.0 &lt;b&gt;/);
    assert.match(page.text, /this session/);
    // One block per session on a phone (the layout is checked in test/e2e/phone-layout.test.ts): each cell names its
    // column.
    assert.match(page.text, /<table class="sessions stacked">/);
    for (const label of ['Signed in: ', 'Last seen: ', 'Browser: '])
      assert.ok(page.text.includes(`<span class="cell-label">${label}</span>`), label);
    const ids = await t.deps.db.selectFrom('sessions').select(['public_id', 'user_agent', 'account_id']).execute();
    const theirs = ids.find((r) => r.user_agent === 'Browser-There/2.0 <b>')!;
    const strangers = ids.find((r) => r.account_id === stranger.account.id)!;
    assert.ok(!page.text.includes(strangers.public_id), 'only own sessions are listed');

    assert.equal(
      (await here.post('/profile/sessions/end', { session: strangers.public_id })).location,
      '/profile?notice=session-ended',
    );
    assert.equal((await stranger.client.get('/')).status, 200, 'a foreign session is untouched');
    assert.equal(
      (await here.post('/profile/sessions/end', { session: 'no-such-session' })).location,
      '/profile?notice=session-ended',
    );

    assert.equal(
      (await here.post('/profile/sessions/end', { session: theirs.public_id })).location,
      '/profile?notice=session-ended',
    );
    assert.equal((await there.get('/')).location, '/login');
    assert.equal((await here.get('/')).status, 200);

    const own = ids.find((r) => r.user_agent === 'Browser-Here/1.0')!;
    const out = await here.post('/profile/sessions/end', { session: own.public_id });
    assert.equal(out.location, '/login?notice=signed-out');
    assert.equal((await here.get('/')).location, '/login');
  });
});

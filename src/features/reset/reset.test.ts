// Administrator-minted password reset links.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { TestApp, TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { confirmInSettings } from '../../../test/helpers/once.ts';
import { startAsAdmin } from '../../../test/helpers/team-factories.ts';
import { buildAccount, signIn, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { sha256 } from '../../deps.ts';
import { mintResetLink, useResetLink } from './reset.service.ts';

const NEW_PASSWORD = 'a brand new passphrase';
const LINK = /<code class="secret" id="reset-link">(http:\/\/localhost\/reset\?token=([A-Za-z0-9_-]{43}))<\/code>/;

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), ['sessions', 'password_resets', 'auth_throttle', 'accounts']));
  });

  /**
   * Presses "Create reset link" on the account's page (its one-time token included) and returns the answer; confirms
   * it's the admin first when the page asks.
   */
  const pressCreate = async (accountId: string, once?: string) => {
    let page = await admin.get(`/settings/accounts/${accountId}`);
    if (page.text.includes('id="reset-link-confirm"')) {
      await confirmInSettings(admin, TEST_PASSWORD, accountId);
      page = await admin.get(`/settings/accounts/${accountId}`);
    }
    const token = once ?? /name="_once" value="([^"]+)"/.exec(page.text)![1]!;
    return {
      once: token,
      res: await admin.post('/settings/accounts/reset-link', { account: accountId, _once: token }),
    };
  };
  /** Mints through the page and returns the link shown on the page after the redirect. */
  const mintThroughPage = async (accountId: string) => {
    const { res } = await pressCreate(accountId);
    assert.equal(res.status, 303);
    const shown = await admin.get(res.location!);
    const match = LINK.exec(shown.text);
    assert.ok(match, 'the link is on the page after the redirect');
    return { url: match[1]!, token: match[2]!, page: shown };
  };
  const pathOf = (url: string) => url.slice('http://localhost'.length);
  const row = (id: string) =>
    t.deps.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const login = async (username: string, password: string) => {
    const c = t.client();
    await c.get('/login');
    return c.post('/login', { username, password });
  };

  test('the link is shown once after a redirect, stored only as its SHA-256, never logged, and a resent form mints nothing', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const { once, res } = await pressCreate(vera.id);
    assert.equal(res.location, `/settings/accounts/${vera.id}?reveal=reset-link#reset-link-result`);
    const first = await admin.get(res.location!);
    const [, url, token] = LINK.exec(first.text)!;
    assert.match(
      first.text,
      /Reset link created for <strong>vera<\/strong>, valid until <time datetime="2026-01-16T12:00:00.000Z">/,
    );
    const stored = await t.deps.db.selectFrom('password_resets').selectAll().execute();
    assert.deepEqual(stored, [
      {
        account_id: vera.id,
        token_hash: sha256(token!),
        created_at: t.clock.now(),
        expires_at: t.clock.now() + 24 * 3600_000,
      },
    ]);

    const again = await admin.get(res.location!);
    assert.ok(!again.text.includes(token!), 'a reload shows it no more');
    assert.match(again.text, /This reset link was shown once and is not shown again\./, 'and says so');
    assert.match(again.text, /one unused link, valid until/);
    assert.doesNotMatch(
      (await admin.get(`/settings/accounts/${vera.id}`)).text,
      /was shown once/,
      'the plain page does not',
    );
    const resent = await admin.post('/settings/accounts/reset-link', { account: vera.id, _once: once });
    assert.equal(resent.location, `/settings/accounts/${vera.id}?reveal=reset-link#reset-link-result`);
    assert.deepEqual(
      await t.deps.db.selectFrom('password_resets').selectAll().execute(),
      stored,
      'the resent form minted nothing',
    );

    await t.client().get(pathOf(url!));
    assert.ok(!t.logs.join('\n').includes(token!), 'the token is in no log line, request lines included');
    assert.ok(t.logs.some((l) => l.includes('"event":"reset-link-created"')));
  });

  test('following the link sets a new password, ends every session, keeps the second factor', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const veraClient = await signIn(t, vera);
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
      .where('id', '=', vera.id)
      .execute();
    const before = await row(vera.id);
    const { url, token } = await mintThroughPage(vera.id);

    const holder = t.client();
    const form = await holder.get(pathOf(url));
    assert.equal(form.status, 200);
    assert.equal(form.headers.get('referrer-policy'), 'strict-origin');
    assert.match(form.text, /Choose a new password for <strong>vera<\/strong>/);
    assert.match(form.text, /<label for="reset-password">New password<\/label>/);

    const short = await holder.post('/reset', { token, password: 'short' });
    assert.equal(short.status, 400);
    assert.match(short.text, /Passwords are at least 8 characters\./);
    assert.equal(short.headers.get('referrer-policy'), 'strict-origin');
    assert.equal((await row(vera.id)).password_hash, before.password_hash, 'nothing changed');

    const done = await holder.post('/reset', { token, password: NEW_PASSWORD });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/login?notice=password-reset');
    assert.match((await holder.get(done.location!)).text, /Your new password is set/);
    const after = await row(vera.id);
    assert.equal(after.credentials_version, before.credentials_version + 1);
    assert.equal(after.totp_enabled, 1, 'the second factor stays');
    assert.equal(
      (await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', vera.id).execute()).length,
      0,
    );
    assert.equal((await veraClient.get('/')).location, '/login');
    assert.equal((await login('vera', TEST_PASSWORD)).status, 401, 'the old password is gone');
    assert.equal((await login('vera', NEW_PASSWORD)).location, '/login/totp', 'the next sign-in still owes the code');
    assert.deepEqual(await t.deps.db.selectFrom('password_resets').select('account_id').execute(), [], 'spent');

    for (const path of [pathOf(url), `/reset?token=${'A'.repeat(43)}`, '/reset', '/reset?token=short']) {
      const res = await t.client().get(path);
      assert.equal(res.status, 410, path);
      assert.match(res.text, /This password reset link is not valid\./);
    }
    const reuse = await holder.post('/reset', { token, password: 'yet another passphrase' });
    assert.equal(reuse.status, 410);
  });

  test('expired and replaced links get the same invalid page; a suspended account gets a page of its own', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const first = await mintThroughPage(vera.id);
    const second = await mintThroughPage(vera.id);
    assert.match(second.page.text, /Creating one voids the unused link\./);
    assert.equal((await t.client().get(pathOf(first.url))).status, 410, 'minting a new link voided the previous one');
    assert.equal((await t.client().get(pathOf(second.url))).status, 200);

    await admin.post('/settings/accounts/suspend', { account: vera.id });
    for (const res of [
      await t.client().get(pathOf(second.url)),
      await t.client().post('/reset', { token: second.token, password: NEW_PASSWORD }),
    ]) {
      assert.equal(res.status, 403);
      assert.match(res.text, /This account is suspended, so its password cannot be reset now\./);
    }
    assert.equal((await login('vera', TEST_PASSWORD)).status, 403, 'the password is unchanged');
    await admin.post('/settings/accounts/reactivate', { account: vera.id });
    assert.equal((await t.client().get(pathOf(second.url))).status, 200, 'the link works again once reactivated');

    t.clock.advance(24 * 3600_000);
    const expired = await t.client().get(pathOf(second.url));
    assert.equal(expired.status, 410);
    assert.match(expired.text, /This password reset link is not valid\./);
  });

  test('a link dies when its account changes the password itself', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const { url } = await mintThroughPage(vera.id);
    const own = await signIn(t, vera);
    await own.get('/profile');
    const changed = await own.post('/profile/password', { current: TEST_PASSWORD, password: NEW_PASSWORD });
    assert.equal(changed.status, 303);
    assert.equal((await t.client().get(pathOf(url))).status, 410, 'the link minted before the change no longer works');
  });

  test('the token stays out of the request log however its parameter name is spelled (percent-escapes, case)', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const minted = await mintResetLink(t.deps, { actorId: null, accountId: vera.id, base: 'http://localhost' });
    assert.ok(minted.ok);
    const token = new URL(minted.url).searchParams.get('token')!;
    // The router decodes parameter names, so "%74oken" is the token: the page opens, and the log must not hold it.
    const encoded = await t.client().get(`/reset?x=1&%74oken=${token}`);
    assert.equal(encoded.status, 200);
    await t.client().get(`/reset?TOKEN=${token}&to%6Ben=${token}&%E0%A4%A=${token}`);
    assert.ok(!t.logs.join('\n').includes(token), 'no log line holds the token');
    assert.ok(
      t.logs.some((l) => l.includes('"url":"/reset?x=1&%74oken=[redacted]"')),
      'the request is logged, its value redacted',
    );
  });

  test('two uses of one link at once: exactly one sets its password', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const minted = await mintResetLink(t.deps, { actorId: null, accountId: vera.id, base: 'https://svc.example' });
    assert.ok(minted.ok);
    assert.match(minted.url, /^https:\/\/svc\.example\/reset\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(minted.url).searchParams.get('token')!;
    const results = await Promise.all([
      useResetLink(t.deps, { token, password: 'first racer passphrase' }),
      useResetLink(t.deps, { token, password: 'second racer passphrase' }),
    ]);
    assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
    assert.deepEqual(
      results.find((r) => !r.ok),
      { ok: false, reason: 'invalid' },
    );
    const winner = results[0]!.ok ? 'first racer passphrase' : 'second racer passphrase';
    assert.equal((await login('vera', winner)).location, '/');
  });

  test('never for one’s own account from the page; the CLI (no actor) may mint for anyone; unknown accounts are refused', async () => {
    const self = await admin.post('/settings/accounts/reset-link', { account: adminId, _once: 'x'.repeat(43) });
    assert.equal(self.status, 409);
    assert.match(
      self.text,
      /You cannot create a reset link for your own account\. Change your password on your Profile\./,
    );
    assert.equal(
      (await admin.post('/settings/accounts/reset-link', { account: adminId })).status,
      303,
      'no one-time token: nothing minted',
    );
    assert.deepEqual(await t.deps.db.selectFrom('password_resets').select('account_id').execute(), []);
    const page = await admin.get(`/settings/accounts/${adminId}`);
    assert.doesNotMatch(page.text, /Create reset link/);
    assert.deepEqual(await mintResetLink(t.deps, { actorId: adminId, accountId: adminId, base: 'http://localhost' }), {
      ok: false,
      reason: 'self',
    });
    assert.deepEqual(await mintResetLink(t.deps, { actorId: adminId, accountId: 'gone', base: 'http://localhost' }), {
      ok: false,
      reason: 'reauth-required',
    });
    const cli = await mintResetLink(t.deps, { actorId: null, accountId: adminId, base: 'http://localhost' });
    assert.ok(cli.ok);
    assert.deepEqual(await mintResetLink(t.deps, { actorId: null, accountId: 'gone', base: 'http://localhost' }), {
      ok: false,
      reason: 'not-found',
    });
  });

  test('a reset link asks "Confirm it’s you" first; a direct post is refused by the service; 10 minutes later it asks again', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const links = () => t.deps.db.selectFrom('password_resets').select('account_id').execute();
    const before = await admin.get(`/settings/accounts/${vera.id}`);
    assert.match(before.text, /<form method="post" action="\/settings\/accounts\/reauth" id="reset-link-confirm">/);
    assert.match(
      before.text,
      /<input type="hidden" name="account" value="[^"]+"\/><div class="field"><label for="reset-link-confirm-secret">Password<\/label>/,
    );
    assert.doesNotMatch(before.text, /Create reset link/, 'the act waits for the confirmation');
    // A post anyway (a stale page, a stolen session) mints nothing.
    const refused = await admin.post('/settings/accounts/reset-link', { account: vera.id, _once: 'A'.repeat(43) });
    assert.equal(refused.status, 403);
    assert.match(
      refused.text,
      /Confirm it’s you first: your last confirmation is more than 10 minutes old\. Nothing was created\./,
    );
    assert.match(refused.text, /id="reset-link-confirm"/);
    assert.deepEqual(await links(), []);
    assert.ok(!t.logs.some((l) => l.includes('reset-link-created')));

    const wrong = await admin.post('/settings/accounts/reauth', { secret: 'not the password', account: vera.id });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /id="reset-link-confirm-secret-error">Incorrect password\./);
    assert.match(wrong.text, /class="error-summary"/);
    const ok = await admin.post('/settings/accounts/reauth', { secret: TEST_PASSWORD, account: vera.id });
    assert.equal(ok.location, `/settings/accounts/${vera.id}?notice=confirmed#account-password`);
    const confirmed = await admin.get(ok.location!);
    assert.match(confirmed.text, /Confirmed\. For the next 10 minutes you can [^<]*create password reset links/);
    assert.match(confirmed.text, /Create reset link/);
    assert.doesNotMatch(confirmed.text, /id="reset-link-confirm"/);

    t.clock.advance(10 * 60_000 - 1);
    assert.equal(
      (await pressCreate(vera.id)).res.location,
      `/settings/accounts/${vera.id}?reveal=reset-link#reset-link-result`,
    );
    assert.deepEqual(await links(), [{ account_id: vera.id }]);
    t.clock.advance(1);
    assert.match((await admin.get(`/settings/accounts/${vera.id}`)).text, /id="reset-link-confirm"/, 'it asks again');
    const late = await admin.post('/settings/accounts/reset-link', { account: vera.id, _once: 'B'.repeat(43) });
    assert.equal(late.status, 403);
    assert.equal(
      (await t.deps.db.selectFrom('password_resets').select('created_at').executeTakeFirstOrThrow()).created_at,
      t.clock.now() - 1,
      'the link minted in time is the only one',
    );
    // The service itself: a session that confirmed lately, but not this actor's, vouches for nothing; the CLI is
    // exempt.
    const other = await buildAccount(t, { role: 'admin' });
    const otherClient = await signIn(t, other);
    await confirmInSettings(otherClient, TEST_PASSWORD);
    const otherSession = await t.deps.db
      .selectFrom('sessions')
      .select('id_hash')
      .where('account_id', '=', other.id)
      .executeTakeFirstOrThrow();
    const input = { accountId: vera.id, base: 'http://localhost' };
    assert.deepEqual(await mintResetLink(t.deps, { ...input, actorId: adminId, sessionIdHash: otherSession.id_hash }), {
      ok: false,
      reason: 'reauth-required',
    });
    assert.ok((await mintResetLink(t.deps, { ...input, actorId: other.id, sessionIdHash: otherSession.id_hash })).ok);
    assert.ok((await mintResetLink(t.deps, { ...input, actorId: null })).ok);
  });
});

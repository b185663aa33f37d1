// Passkeys in a real browser: Chromium with a virtual authenticator (DevTools protocol: ctap2, internal transport,
// resident keys, user verification) registers a passkey from Profile, signs in with it alone on /login, and uses it as
// the second factor after a password, and shows a locked address the lock's words at the passkey button before any
// ceremony; a browser with JavaScript off signs in by password and TOTP and is told why the
// passkey controls are not there. No page logs a Content-Security-Policy violation. With SVC_SCREENSHOTS=<dir> set,
// the sign-in page, the second-factor step and Profile's passkeys are saved at 1280 and 390 px wide.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { codeNow, enrolTotp } from '../helpers/second-factor.ts';
import { signInAddressKey } from '../../src/features/auth/signin.service.ts';

const SHOTS = process.env.SVC_SCREENSHOTS;

/** A page in a fresh context with a virtual platform authenticator, collecting CSP violations. */
async function pageWithAuthenticator(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  const violations = watchCsp(page);
  return { context, page, cdp, authenticatorId, violations };
}

/** Collects console messages about the Content-Security-Policy or refused loads. */
function watchCsp(page: Page): string[] {
  const found: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) found.push(msg.text());
  });
  return found;
}

async function signOut(page: Page): Promise<void> {
  await page.locator('header').getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/login\?notice=signed-out$/);
}

/** Saves the page at 1280 and 390 px wide when screenshots are asked for. */
async function shoot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 720 });
}

/** Confirms the password on Profile, adds a passkey named `name`, and comes back to Profile. */
async function addPasskey(page: Page, base: string, password: string, name: string): Promise<void> {
  await page.goto(`${base}/profile`);
  const confirm = page.locator('#profile-confirm');
  await confirm.getByLabel('Password').fill(password);
  await confirm.getByRole('button', { name: 'Confirm' }).click();
  await page.waitForURL(/notice=confirmed/);
  await page.locator('#profile-passkeys').getByRole('link', { name: 'Add a passkey' }).click();
  await page.waitForURL(`${base}/profile/passkeys/add`);
  await page.getByLabel('Name for this passkey').fill(name);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
}

forEachDialect((getDb) => {
  test('register a passkey from Profile, sign in with it alone, and use it as the second factor', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const account = await buildAccount(t, { username: 'pia' });
    const server = await serveTestApp(t, { localhost: true });
    const browser = await launchBrowser();
    try {
      const { page, violations } = await pageWithAuthenticator(browser);
      await signInWithBrowser(page, server.url, account);
      await addPasskey(page, server.url, account.password, 'Virtual key');
      // The account's first second factor: its recovery codes, shown once.
      await page.waitForURL(/\/profile\/recovery-codes\?from=passkey$/);
      assert.equal(await page.locator('ol.codes code').count(), 10);
      await page.getByRole('link', { name: 'Continue' }).click();
      await page.waitForURL(`${server.url}/profile#profile-passkeys`);
      const section = page.locator('#profile-passkeys');
      assert.match((await section.textContent()) ?? '', /Virtual key/);
      await shoot(page, 'profile-passkeys');
      await signOut(page);

      // On /login, the passkey alone: no username, no password.
      assert.equal(await page.getByText('needs JavaScript').isVisible(), false, 'the script hid the fallback words');
      await shoot(page, 'login');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.waitForURL(`${server.url}/`);
      assert.match((await page.locator('header').textContent()) ?? '', /pia/);
      await signOut(page);

      // The password, then the passkey as the second factor.
      await signInWithBrowser(page, server.url, account, '/login/totp');
      await shoot(page, 'second-factor-step');
      await page.getByRole('button', { name: 'Use your passkey' }).click();
      await page.waitForURL(`${server.url}/`);
      const used = await t.deps.db.selectFrom('passkeys').select(['name', 'last_used_at']).execute();
      assert.deepEqual(
        used.map((p) => p.name),
        ['Virtual key'],
      );
      assert.ok(used[0]!.last_used_at !== null);

      // This address locked out of signing in: the passkey button says so before any fingerprint or PIN is asked for.
      await signOut(page);
      const lock = { locked_until: t.clock.now() + 15 * 60_000, keep_until: t.clock.now() + 15 * 60_000 };
      const locked = await t.deps.db
        .updateTable('auth_throttle')
        .set(lock)
        .where('key', '=', signInAddressKey('127.0.0.1').key)
        .executeTakeFirst();
      assert.equal(Number(locked.numUpdatedRows), 1, 'the address’s sign-in throttle row, written by its sign-ins');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText('Too many failed attempts. Try again in 15 minutes.').waitFor();
      assert.equal(page.url(), `${server.url}/login?notice=signed-out`);
      assert.deepEqual(await t.deps.db.selectFrom('webauthn_challenges').selectAll().execute(), [], 'nothing held');
      await t.deps.db.deleteFrom('auth_throttle').execute(); // the next test signs in from this address
      assert.deepEqual(violations, [], 'no content-security-policy violations');
    } finally {
      await browser.close();
      await server.close();
    }
  });

  test('with JavaScript off, the passkey controls say why they are missing, and password and TOTP sign in', {
    skip: browserSkip,
  }, async () => {
    const t: TestApp = buildTestApp(getDb());
    const account = await buildAccount(t, { username: 'noscript' });
    const { secret } = await enrolTotp(t, account);
    // A passkey too, so the second-factor step offers one (added directly: this browser cannot run the ceremony).
    await t.deps.db
      .insertInto('passkeys')
      .values({
        id: 'noscript-key',
        account_id: account.id,
        credential_id: 'bm9zY3JpcHQta2V5',
        public_key: 'AA',
        counter: 0,
        transports: 'internal',
        device_type: 'multiDevice',
        backed_up: 1,
        name: 'Phone',
        created_at: t.clock.now(),
        last_used_at: null,
      })
      .execute();
    const server = await serveTestApp(t, { localhost: true });
    const browser = await launchBrowser();
    let context: BrowserContext | undefined;
    try {
      context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${server.url}/login`);
      assert.ok(await page.getByText('Signing in with a passkey needs JavaScript').isVisible());
      assert.equal(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible(), false);
      await shoot(page, 'login-no-js');
      await signInWithBrowser(page, server.url, account, '/login/totp');
      assert.ok(await page.getByText('Using a passkey needs JavaScript').isVisible());
      assert.equal(await page.getByRole('button', { name: 'Use your passkey' }).isVisible(), false);
      await shoot(page, 'second-factor-step-no-js');
      await page.getByLabel('Authentication code').fill(codeNow(t, secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${server.url}/`);
      await page.goto(`${server.url}/profile#profile-passkeys`);
      const section = page.locator('#profile-passkeys');
      assert.match((await section.textContent()) ?? '', /Phone/);
      assert.match((await section.textContent()) ?? '', /Synced/);
    } finally {
      await context?.close();
      await browser.close();
      await server.close();
    }
  });
});

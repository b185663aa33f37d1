// The second-factor story in a real browser: enrol from the profile by reading the secret off the page, sign out,
// sign in with password and a generated code, then with a recovery code, and see the used code refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { totpCode } from '../../src/features/second-factor/totp.ts';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';

forEachDialect((getDb) => {
  test('enrol TOTP from the profile, then sign in with a code and with a recovery code, once', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const account = await buildAccount(t, { username: 'tess' });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    const signOut = async (page: Page) => {
      await page.locator('header').getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/login\?notice=signed-out$/);
    };
    try {
      const page = await (await browser.newContext()).newPage();
      const consoleErrors: string[] = [];
      page.on('console', (msg) => {
        if (/Content Security Policy|Refused to/i.test(msg.text())) consoleErrors.push(msg.text());
      });
      await signInWithBrowser(page, server.url, account);

      await page.goto(`${server.url}/profile`);
      // "Confirm it's you" first (the page's one confirm form), then the set-up button; the key is shown once, on the
      // page after the redirect.
      assert.equal(
        await page
          .locator('#profile-second-factor')
          .getByRole('button', { name: 'Set up two-factor authentication' })
          .count(),
        0,
      );
      const confirm = page.locator('#profile-confirm');
      await confirm.getByLabel('Password').fill(account.password);
      await confirm.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL(/notice=confirmed#profile-confirm/);
      await page
        .locator('#profile-second-factor')
        .getByRole('button', { name: 'Set up two-factor authentication' })
        .click();
      await page.waitForURL(`${server.url}/profile/totp`);
      // isVisible() does not wait: the click's page load may not have rendered yet. waitFor() throws if it never does.
      await page.locator('figure.qr svg').waitFor({ state: 'visible', timeout: 10_000 });
      assert.ok(await page.locator('figure.qr svg').isVisible(), 'the QR code renders');
      const grouped = ((await page.locator('#totp-secret').textContent()) ?? '').trim();
      assert.match(grouped, /^([A-Z2-7]{4} ){7}[A-Z2-7]{4}$/, 'the key in groups of four');
      const secret = grouped.replaceAll(' ', '');
      assert.match(
        (await page.getByRole('link', { name: /set-up link/ }).getAttribute('href')) ?? '',
        /^otpauth:\/\/totp\//,
      );
      await page.getByLabel('Code from your app').fill(totpCode(secret, t.clock.now()));
      await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
      await page.waitForURL(/\/profile\/recovery-codes\?from=enrolment$/);
      const codes = (await page.locator('ol.codes code').allTextContents()).map((c) => c.trim());
      assert.equal(codes.length, 10);
      assert.deepEqual(consoleErrors, [], 'no content-security-policy violations on the enrolment pages');
      await page.getByRole('link', { name: 'Continue' }).click();
      await page.waitForURL(`${server.url}/profile#profile-second-factor`);
      assert.match((await page.textContent('main')) ?? '', /10 of 10/);
      await signOut(page);
      t.clock.advance(30_000);

      // Password, then a code generated from the secret read off the page.
      await signInWithBrowser(page, server.url, account, '/login/totp');
      await page.getByLabel('Authentication code').fill(totpCode(secret, t.clock.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${server.url}/`);
      await signOut(page);
      t.clock.advance(30_000);

      // Password, then a recovery code.
      await signInWithBrowser(page, server.url, account, '/login/totp');
      await page.getByLabel('Authentication code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(/\/profile\?notice=recovery-code-used$/);
      assert.match((await page.textContent('main')) ?? '', /9 of 10/);
      await signOut(page);

      // The used recovery code no longer works.
      await signInWithBrowser(page, server.url, account, '/login/totp');
      await page.getByLabel('Authentication code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Verify' }).click();
      assert.match((await page.textContent('main')) ?? '', /That code is not valid/);
      assert.equal(new URL(page.url()).pathname, '/login/totp');
      assert.equal(
        (await page.goto(`${server.url}/profile`))?.url(),
        `${server.url}/login/totp`,
        'still owes its code',
      );
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

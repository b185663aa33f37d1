// The first-run story in a real browser: setup link, create the admin, sign in, home, sign out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prepareSetupToken } from '../../src/features/setup/setup.service.ts';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';

forEachDialect((getDb) => {
  test('a new operator sets up svc, signs in and out', { skip: browserSkip }, async () => {
    const t = buildTestApp(getDb());
    const token = await prepareSetupToken(t.deps);
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/setup?token=${token}`);
      await page.getByLabel('Username').fill('operator');
      await page.getByLabel('Password').fill('a sturdy passphrase');
      await page.getByRole('button', { name: 'Create administrator' }).click();
      await page.waitForURL(/\/login\?notice=setup-done$/);
      assert.match((await page.textContent('body')) ?? '', /first administrator account is ready/);

      await page.getByLabel('Username').fill('operator');
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      assert.match((await page.textContent('body')) ?? '', /Incorrect username or password/);

      // The first sign-in offers second-factor enrolment; it is optional.
      await signInWithBrowser(
        page,
        server.url,
        { username: 'operator', password: 'a sturdy passphrase' },
        '/login/enrol',
      );
      await page.getByRole('button', { name: 'Skip for now' }).click();
      await page.waitForURL(`${server.url}/`);
      const header = (await page.textContent('header')) ?? '';
      assert.match(header, /operator/);
      assert.match(header, /admin/);
      assert.equal(await page.getByRole('link', { name: 'Settings' }).count(), 1);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/login\?notice=signed-out$/);
      await page.goto(`${server.url}/`);
      assert.match(page.url(), /\/login$/);
      await page.goto(`${server.url}/setup`);
      assert.match(page.url(), /\/login$/, 'setup is closed once an account exists');
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

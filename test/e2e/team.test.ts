// The team story in a real browser: an admin invites a viewer, who joins in another browser, then gets promoted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';

forEachDialect((getDb) => {
  test('an admin invites a viewer, the viewer joins and signs in, and a promotion opens /settings', { skip: browserSkip }, async () => {
    const t = buildTestApp(getDb());
    const boss = await buildAccount(t, { username: 'boss', role: 'admin' });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const adminPage = await (await browser.newContext()).newPage();
      await signInWithBrowser(adminPage, server.url, boss);

      await adminPage.goto(`${server.url}/settings`);
      await adminPage.getByLabel('Role', { exact: true }).selectOption('viewer');
      await adminPage.getByRole('button', { name: 'Create invitation' }).click();
      const link = (await adminPage.locator('#join-link').textContent())?.trim() ?? '';
      assert.match(link, new RegExp(`^${server.url}/invite\\?token=[A-Za-z0-9_-]{43}$`));

      // The invitee, in a separate browser context (no shared cookies).
      const invitee = await (await browser.newContext()).newPage();
      await invitee.goto(link);
      assert.match((await invitee.textContent('main')) ?? '', /with the role viewer/);
      await invitee.getByLabel('Username').fill('vera');
      await invitee.getByLabel('Password').fill('a sturdy passphrase');
      await invitee.getByRole('button', { name: 'Create account' }).click();
      await invitee.waitForURL(/\/login\?notice=invited$/);
      assert.match((await invitee.textContent('main')) ?? '', /Your account is ready/);

      // A new account is offered second-factor enrolment at its first sign-in; it may skip.
      await signInWithBrowser(invitee, server.url, { username: 'vera', password: 'a sturdy passphrase' }, '/login/enrol');
      await invitee.getByRole('button', { name: 'Skip for now' }).click();
      await invitee.waitForURL(`${server.url}/`);
      assert.equal((await invitee.goto(`${server.url}/settings`))?.status(), 403);

      await adminPage.goto(`${server.url}/settings?tab=team`);
      await adminPage.getByLabel('Role for vera', { exact: true }).selectOption('admin');
      await adminPage.getByRole('row', { name: /vera/ }).getByRole('button', { name: 'Save role' }).click();
      await adminPage.waitForURL(/notice=role-changed$/);

      const settings = await invitee.goto(`${server.url}/settings`);
      assert.equal(settings?.status(), 200);
      assert.match((await invitee.textContent('main')) ?? '', /Team/);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

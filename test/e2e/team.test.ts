// The team stories in a real browser: an admin invites a viewer, who joins in another browser, then gets promoted; an
// admin invitation after "Confirm it's you"; an admin suspends and reactivates an account, and hands out a password
// reset link (after "Confirm it's you") that is followed in another browser; an admin resets a second factor of TOTP
// and passkeys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { buildPasskeys, passkeysOf } from '../helpers/team-factories.ts';

forEachDialect((getDb) => {
  test('an admin invites a viewer, the viewer joins and signs in, and a promotion opens /settings', {
    skip: browserSkip,
  }, async () => {
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
      await signInWithBrowser(
        invitee,
        server.url,
        { username: 'vera', password: 'a sturdy passphrase' },
        '/login/enrol',
      );
      await invitee.getByRole('button', { name: 'Skip for now' }).click();
      await invitee.waitForURL(`${server.url}/`);
      assert.equal((await invitee.goto(`${server.url}/settings`))?.status(), 403);

      await adminPage.goto(`${server.url}/settings?tab=team`);
      await adminPage.getByRole('link', { name: 'vera', exact: true }).click();
      // Making an administrator asks "Confirm it's you" first, in the Role section.
      await adminPage.locator('#account-role-confirm').getByLabel('Password').fill(boss.password);
      await adminPage.locator('#account-role-confirm').getByRole('button', { name: 'Confirm' }).click();
      await adminPage.waitForURL(/notice=confirmed-role#account-role$/);
      await adminPage.getByLabel('Role for vera', { exact: true }).selectOption('admin');
      await adminPage.getByRole('button', { name: 'Save role' }).click();
      await adminPage.waitForURL(/notice=role-changed$/);

      const settings = await invitee.goto(`${server.url}/settings`);
      assert.equal(settings?.status(), 200);
      assert.match((await invitee.textContent('main')) ?? '', /Team/);

      // An admin invitation: only after "Confirm it's you" does the form offer the admin role (the confirmation for
      // the promotion above has lapsed).
      t.clock.advance(11 * 60_000);
      await adminPage.goto(`${server.url}/settings?tab=team`);
      assert.deepEqual(await adminPage.getByLabel('Role', { exact: true }).locator('option').allTextContents(), [
        'viewer',
      ]);
      const confirm = adminPage.locator('#invite-confirm');
      await confirm.getByLabel('Password').fill('not the password');
      await confirm.getByRole('button', { name: 'Confirm' }).click();
      assert.match(
        (await adminPage.locator('#invite-confirm [role="alert"]').textContent()) ?? '',
        /Incorrect password/,
      );
      await adminPage.locator('#invite-confirm').getByLabel('Password').fill(boss.password);
      await adminPage.locator('#invite-confirm').getByRole('button', { name: 'Confirm' }).click();
      await adminPage.waitForURL(/notice=confirmed#invite$/);
      await adminPage.getByLabel('Role', { exact: true }).selectOption('admin');
      await adminPage.getByRole('button', { name: 'Create invitation' }).click();
      await adminPage.waitForURL(/reveal=invitation/);
      assert.match((await adminPage.locator('#invite-result').textContent()) ?? '', /for the role admin/);
      assert.match((await adminPage.locator('#join-link').textContent()) ?? '', /\/invite\?token=[A-Za-z0-9_-]{43}$/);
    } finally {
      await browser.close();
      await server.close();
    }
  });

  test('an admin suspends an account (sign-in refused), reactivates it, and a reset link is followed in another browser', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const boss = await buildAccount(t, { username: 'chief', role: 'admin' });
    const dana = await buildAccount(t, { username: 'dana', role: 'viewer' });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const adminPage = await (await browser.newContext()).newPage();
      await signInWithBrowser(adminPage, server.url, boss);
      const danaPage = await (await browser.newContext()).newPage();
      await signInWithBrowser(danaPage, server.url, dana);

      // Suspend, through its confirmation step.
      await adminPage.goto(`${server.url}/settings?tab=team`);
      await adminPage.getByRole('link', { name: 'dana', exact: true }).click();
      await adminPage.getByRole('link', { name: 'Suspend…' }).click();
      await adminPage.getByRole('button', { name: 'Suspend dana' }).click();
      await adminPage.waitForURL(/notice=suspended$/);
      assert.match((await adminPage.textContent('main')) ?? '', /Account suspended\./);

      // Dana's open session ended; signing in again is refused with the plain reason.
      await danaPage.goto(`${server.url}/`);
      assert.match(danaPage.url(), /\/login$/);
      await danaPage.getByLabel('Username').fill('dana');
      await danaPage.getByLabel('Password').fill(dana.password);
      await danaPage.getByRole('button', { name: 'Sign in', exact: true }).click();
      assert.match((await danaPage.textContent('main')) ?? '', /This account is suspended, so it cannot sign in/);

      await adminPage.getByRole('button', { name: 'Reactivate' }).click();
      await adminPage.waitForURL(/notice=reactivated$/);

      // A reset link, after "Confirm it's you", shown once, followed in a separate browser context.
      assert.equal(
        await adminPage.getByRole('button', { name: 'Create reset link' }).count(),
        0,
        'it waits for the confirmation',
      );
      await adminPage.locator('#reset-link-confirm').getByLabel('Password').fill(boss.password);
      await adminPage.locator('#reset-link-confirm').getByRole('button', { name: 'Confirm' }).click();
      await adminPage.waitForURL(/notice=confirmed#account-password$/);
      await adminPage.getByRole('button', { name: 'Create reset link' }).click();
      const link = (await adminPage.locator('#reset-link').textContent())?.trim() ?? '';
      assert.match(link, new RegExp(`^${server.url}/reset\\?token=[A-Za-z0-9_-]{43}$`));
      await adminPage.reload();
      assert.equal(await adminPage.locator('#reset-link').count(), 0, 'shown once only');

      const holder = await (await browser.newContext()).newPage();
      await holder.goto(link);
      assert.match((await holder.textContent('main')) ?? '', /Choose a new password for dana/);
      await holder.getByLabel('New password').fill('a fresh passphrase');
      await holder.getByRole('button', { name: 'Set new password' }).click();
      await holder.waitForURL(/\/login\?notice=password-reset$/);
      await signInWithBrowser(holder, server.url, { username: 'dana', password: 'a fresh passphrase' });
      await holder.goto(link);
      assert.match((await holder.textContent('main')) ?? '', /This password reset link is not valid/);
    } finally {
      await browser.close();
      await server.close();
    }
  });

  test('an admin labels an invitation with a note, signs an account out everywhere, moves its records and removes it', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const boss = await buildAccount(t, { username: 'lead', role: 'admin' });
    const olga = await buildAccount(t, { username: 'olga', role: 'admin' });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const adminPage = await (await browser.newContext()).newPage();
      await signInWithBrowser(adminPage, server.url, boss);
      const olgaPage = await (await browser.newContext()).newPage();
      await signInWithBrowser(olgaPage, server.url, olga);

      // Olga mints a viewer invitation with a note: the admin list shows the note and its author, nothing else does.
      await olgaPage.goto(`${server.url}/settings?tab=team`);
      await olgaPage.getByLabel('Role', { exact: true }).selectOption('viewer');
      await olgaPage.getByLabel('Note (optional)').fill('for Dana, on-call');
      await olgaPage.getByRole('button', { name: 'Create invitation' }).click();
      const joinLink = (await olgaPage.locator('#join-link').textContent())?.trim() ?? '';
      await adminPage.goto(`${server.url}/settings?tab=team`);
      const row = adminPage.getByRole('row', { name: /for Dana, on-call/ });
      assert.match((await row.textContent()) ?? '', /olga/);
      const invitee = await (await browser.newContext()).newPage();
      await invitee.goto(joinLink);
      assert.doesNotMatch((await invitee.textContent('main')) ?? '', /Dana|on-call/, 'the note is for admins only');

      // Sign olga out everywhere: her browser is out, the page says her tokens are untouched.
      await adminPage.getByRole('link', { name: 'olga', exact: true }).click();
      await adminPage.getByRole('link', { name: 'Sign out everywhere…' }).click();
      await adminPage.getByRole('button', { name: 'Sign olga out everywhere' }).click();
      assert.match((await adminPage.textContent('main')) ?? '', /Signed out everywhere.*API tokens are untouched/s);
      await olgaPage.goto(`${server.url}/`);
      assert.match(olgaPage.url(), /\/login$/);

      // Removal is refused while she authored the invitation; the records move to lead, then removal works.
      await adminPage.getByLabel('Type olga to remove this account').fill('olga');
      await adminPage.getByRole('button', { name: 'Remove account' }).click();
      assert.match((await adminPage.textContent('main')) ?? '', /authored records/);
      await adminPage.getByLabel('Move its authored records to').selectOption({ label: 'lead' });
      await adminPage.getByRole('button', { name: 'Review the move…' }).click();
      await adminPage.getByRole('button', { name: 'Move records to lead' }).click();
      assert.match(
        (await adminPage.textContent('main')) ?? '',
        /Its authored records now belong to the account you chose/,
      );
      await adminPage.getByLabel('Type olga to remove this account').fill('olga');
      await adminPage.getByRole('button', { name: 'Remove account' }).click();
      await adminPage.waitForURL(/tab=team/);
      assert.match((await adminPage.textContent('main')) ?? '', /Account removed\./);
      assert.match(
        (await adminPage.getByRole('row', { name: /for Dana, on-call/ }).textContent()) ?? '',
        /lead/,
        'the invitation now names lead',
      );
    } finally {
      await browser.close();
      await server.close();
    }
  });

  test('the team list says which second factors each account has; resetting one removes TOTP and every passkey', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const warden = await buildAccount(t, { username: 'warden', role: 'admin' });
    const bea = await buildAccount(t, { username: 'bea' });
    await t.deps.db.updateTable('accounts').set({ totp_enabled: 1 }).where('id', '=', bea.id).execute();
    await buildPasskeys(t, bea.id, 2);
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      await signInWithBrowser(page, server.url, warden);
      await page.goto(`${server.url}/settings?tab=team`);
      assert.match((await page.getByRole('row', { name: /^bea / }).textContent()) ?? '', /TOTP, 2 passkeys/);
      await page.getByRole('link', { name: 'bea', exact: true }).click();
      await page.getByRole('link', { name: 'Reset second factor…' }).click();
      assert.match(
        (await page.locator('#confirm').textContent()) ?? '',
        /This removes the authenticator \(TOTP\) and the 2 passkeys of bea/,
      );
      await page.getByRole('button', { name: 'Reset second factor', exact: true }).click();
      await page.waitForURL(/notice=reenrolled$/);
      assert.match(
        (await page.textContent('main')) ?? '',
        /Second factor cleared: its authenticator \(TOTP\) and any passkeys removed/,
      );
      assert.equal(await passkeysOf(t, bea.id), 0);
      await page.getByRole('link', { name: 'Back to the team' }).click();
      assert.match((await page.getByRole('row', { name: /^bea / }).textContent()) ?? '', /None/);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

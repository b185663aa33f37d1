// Secrets a reload never mints twice, in a real browser: an invitation with a note, an
// API token behind "Confirm it's you", enrolment at sign-in without the password again (key grouped in fours, codes
// downloadable as a text file), each shown once and gone on reload; and the first-run page while no account exists.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { test } from 'node:test';
import { totpCode } from '../../src/features/second-factor/totp.ts';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';

forEachDialect((getDb) => {
  test('first run: the sign-in page says setup is pending and where the link is', { skip: browserSkip }, async () => {
    const db = getDb().db;
    for (const table of [
      'sessions',
      'recovery_codes',
      'api_tokens',
      'invitations',
      'password_resets',
      'accounts',
    ] as const)
      await db.deleteFrom(table).execute();
    const t = buildTestApp(getDb());
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/`);
      assert.match(page.url(), /\/login$/);
      const main = (await page.textContent('main')) ?? '';
      assert.match(main, /not set up yet/);
      assert.match(main, /SVC_SETUP_TOKEN/);
      assert.equal(await page.getByLabel('Password').count(), 0, 'no sign-in form');
      await page.getByRole('link', { name: 'open the setup page' }).click();
      await page.waitForURL(`${server.url}/setup`);
      assert.equal(await page.getByLabel('Setup token').count(), 1);
    } finally {
      await browser.close();
      await server.close();
    }
  });

  test('invitation, API token and recovery codes are shown once, after a redirect, and never on reload', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const boss = await buildAccount(t, { username: 'boss', role: 'admin' });
    const newcomer = await buildAccount(t, { username: 'nina', enrolPrompt: true });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      await signInWithBrowser(page, server.url, boss, '/');

      // An invitation with a note: the link once; a reload shows the note in the list but not the link.
      await page.goto(`${server.url}/settings`);
      // (A viewer invitation needs no "Confirm it's you"; an admin one does, and is not offered before it.)
      assert.deepEqual(await page.getByLabel('Role', { exact: true }).locator('option').allTextContents(), ['viewer']);
      await page.getByLabel('Role', { exact: true }).selectOption('viewer');
      await page.getByLabel('Note (optional)').fill('for Dana, on-call');
      await page.getByRole('button', { name: 'Create invitation' }).click();
      await page.waitForURL(/reveal=invitation/);
      const link = ((await page.locator('#join-link').textContent()) ?? '').trim();
      assert.match(link, /\/invite\?token=[A-Za-z0-9_-]{43}$/);
      await page.reload();
      const reloaded = (await page.textContent('main')) ?? '';
      assert.ok(!reloaded.includes(link), 'a reload shows the link no more');
      assert.match(reloaded, /shown once/);
      assert.match(reloaded, /for Dana, on-call/);
      assert.equal(
        (await t.deps.db.selectFrom('invitations').select('id').execute()).length,
        1,
        'the reload minted nothing',
      );

      // An API token: "Confirm it's you" first (the section links to the page's one confirm form), then the form with
      // its labelled lifetime.
      await page.goto(`${server.url}/profile`);
      await page.locator('#profile-tokens').getByRole('link', { name: 'Confirm it’s you' }).click();
      const confirm = page.locator('#profile-confirm');
      await confirm.getByLabel('Password').fill(boss.password);
      await confirm.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL(/notice=confirmed#profile-confirm/);
      await page.locator('#profile-tokens').getByLabel('Token name').fill('deploy');
      await page.locator('#profile-tokens').getByLabel('Expires after').selectOption('30');
      await page.locator('#profile-tokens').getByRole('button', { name: 'Create token' }).click();
      await page.waitForURL(/reveal=token/);
      const token = ((await page.locator('#new-token').textContent()) ?? '').trim();
      assert.match(token, /^svc_pat_/);
      await page.goBack();
      await page.goForward();
      assert.ok(!(await page.content()).includes(token), 'Back and Forward show the token no more');
      assert.equal((await t.deps.db.selectFrom('api_tokens').select('id').execute()).length, 1);
      await page.locator('header').getByRole('button', { name: 'Sign out' }).click();

      // Enrolment offered at the first sign-in: no password asked again; key in groups of four; codes as a file.
      await signInWithBrowser(page, server.url, newcomer, '/login/enrol');
      assert.equal(await page.getByLabel(/password/i).count(), 0, 'the password is not asked again');
      await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
      await page.locator('figure.qr svg').waitFor({ state: 'visible', timeout: 10_000 });
      const key = ((await page.locator('#totp-secret').textContent()) ?? '').trim();
      assert.match(key, /^([A-Z2-7]{4} ){7}[A-Z2-7]{4}$/);
      await page.reload();
      assert.equal(await page.locator('#totp-secret').count(), 0, 'a reload shows the key no more');
      await page.getByLabel('Code from your app').fill(totpCode(key.replaceAll(' ', ''), t.clock.now()));
      await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
      await page.waitForURL(/\/profile\/recovery-codes\?from=sign-in$/);
      const codes = (await page.locator('ol.codes code').allTextContents()).map((c) => c.trim());
      assert.equal(codes.length, 10);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download as text file' }).click(),
      ]);
      assert.equal(download.suggestedFilename(), 'svc-recovery-codes.txt');
      const file = await fs.readFile((await download.path())!, 'utf8');
      assert.ok(
        codes.every((code) => file.includes(code)),
        'the file holds every code',
      );
      await page.reload();
      assert.equal(await page.locator('ol.codes code').count(), 0, 'a reload shows the codes no more');
      await page.getByRole('link', { name: 'Continue' }).click();
      await page.waitForURL(`${server.url}/`);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

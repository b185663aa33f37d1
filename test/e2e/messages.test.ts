// The messages story in a real browser: an admin adds a channel, a message arrives, the bell counts it,
// the inbox shows where it went, and marking it read clears the bell.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { buildMessage, clearOutbox } from '../helpers/outbox.ts';

forEachDialect((getDb) => {
  test('an admin adds a channel, a message arrives, the bell counts it and marking it read clears it', { skip: browserSkip }, async () => {
    const t = buildTestApp(getDb());
    await clearOutbox(t);
    const admin = await buildAccount(t, { role: 'admin' });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      await signInWithBrowser(page, server.url, admin);

      await page.goto(`${server.url}/settings?tab=channels`);
      await page.getByLabel('Channel URL').fill('http://localhost:9/hook');
      await page.getByLabel('drift').check();
      await page.getByRole('button', { name: 'Add channel' }).click();
      assert.match((await page.textContent('main')) ?? '', /is a host name, not an IP address/);

      await page.getByLabel('Channel URL').fill('http://127.0.0.1:9/hook');
      await page.getByLabel('drift').check();
      await page.getByLabel('Secret (optional)').fill('browser-secret-value');
      await page.getByRole('button', { name: 'Add channel' }).click();
      await page.waitForURL(/notice=created$/);
      const row = page.getByRole('row', { name: /127\.0\.0\.1:9\/hook/ });
      assert.match((await row.textContent()) ?? '', /driftenabledset0/);
      assert.ok(!(await page.content()).includes('browser-secret-value'));

      const id = await buildMessage(t, { headline: 'api.example.com moved to a new address.' });
      await page.goto(`${server.url}/`);
      assert.equal((await page.locator('.bell').textContent())?.trim(), '1');

      await page.getByRole('link', { name: /Inbox/ }).click();
      await page.getByRole('link', { name: 'api.example.com moved to a new address.' }).click();
      await page.waitForURL(`${server.url}/messages/${id}`);
      assert.match((await page.textContent('main')) ?? '', /0 delivered, 1 pending, 0 dead-lettered\./);
      await page.getByRole('button', { name: /Mark read/ }).click();
      await page.waitForURL(`${server.url}/messages/${id}`);
      assert.equal((await page.locator('.bell').textContent())?.trim(), '0');

      await page.goto(`${server.url}/settings?tab=channels`);
      await page.getByRole('link', { name: /Edit channel/ }).click();
      await page.getByLabel('Enabled').uncheck();
      await page.getByRole('button', { name: 'Save channel' }).click();
      await page.waitForURL(/notice=updated$/);
      assert.match((await page.getByRole('row', { name: /127\.0\.0\.1:9\/hook/ }).textContent()) ?? '', /disabled/);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

// The messages story in a real browser: an admin adds a channel, a message arrives, the bell counts it, the unread
// filter finds it, opening it marks it read (the bell clears), "Mark unread" and "Mark all as read" work.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { buildMessage, clearOutbox } from '../helpers/outbox.ts';

forEachDialect((getDb) => {
  test('an admin adds a channel, a message arrives, the bell counts it and opening it marks it read', {
    skip: browserSkip,
  }, async () => {
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
      assert.match((await row.textContent()) ?? '', /drift/);
      assert.ok(!(await page.content()).includes('browser-secret-value'));

      const id = await buildMessage(t, { headline: 'api.example.com moved to a new address.' });
      await page.goto(`${server.url}/`);
      assert.equal((await page.locator('.bell').textContent())?.trim(), '1 unread');

      await page.getByRole('link', { name: /Inbox/ }).click();
      await page.getByRole('link', { name: 'Unread', exact: true }).click();
      await page.getByRole('link', { name: 'api.example.com moved to a new address.', exact: true }).click();
      await page.waitForURL(`${server.url}/messages/${id}`);
      assert.equal(await page.title(), 'api.example.com moved to a new address. · svc');
      assert.match((await page.textContent('main')) ?? '', /0 delivered, 1 pending, 0 dead-lettered\./);
      assert.equal(await page.locator('.bell').count(), 0, 'opening the message marked it read: no badge at 0');
      await page.getByRole('button', { name: 'Mark unread' }).click();
      await page.waitForURL(`${server.url}/inbox?notice=unread`);
      assert.match((await page.textContent('main')) ?? '', /The message is marked unread\./);
      assert.equal((await page.locator('.bell').textContent())?.trim(), '1 unread');
      await page.getByRole('button', { name: 'Mark all as read' }).click();
      await page.waitForURL(`${server.url}/inbox?notice=all-read`);
      assert.equal(await page.getByRole('button', { name: 'Mark all as read' }).count(), 0, 'nothing left to mark');

      await page.goto(`${server.url}/settings?tab=channels`);
      await page.getByRole('link', { name: /Edit channel/ }).click();
      await page.getByLabel('Enabled').uncheck();
      await page.getByRole('button', { name: 'Save channel' }).click();
      await page.waitForURL(/notice=updated$/);
      assert.match((await page.getByRole('row', { name: /127\.0\.0\.1:9\/hook/ }).textContent()) ?? '', /disabled/i);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

// The channels story in a real browser: an admin declares a channel, checks it can be reached (nothing is posted),
// sees it fail once its receiver breaks ("failing since"), and re-sends its dead letters in one act with the count.
// With SHOTS_DIR set, each page is also saved at 1280 and 390 px wide for a person to look at.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { createDeliveryWorker } from '../../src/features/delivery/delivery.worker.ts';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { buildMessage, clearOutbox } from '../helpers/outbox.ts';
import { useReceiver } from '../helpers/receiver.ts';

/** Saves the page at desktop and phone width when SHOTS_DIR is set; asserts nothing. */
async function shoot(page: Page, name: string): Promise<void> {
  const dir = process.env.SHOTS_DIR;
  if (!dir) return;
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${dir}/c1-${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

forEachDialect((getDb, dialect) => {
  const receiver = useReceiver();

  test('declare a channel, check its connection, see it failing, re-send its dead letters in one act', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    await clearOutbox(t);
    const rx = receiver();
    const admin = await buildAccount(t, { role: 'admin' });
    const worker = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 2000 } });
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      await signInWithBrowser(page, server.url, admin);

      await page.goto(`${server.url}/settings?tab=channels`);
      const url = `${rx.url}/hooks/${'very-long-segment-'.repeat(8)}end`;
      await page.getByLabel('Channel URL').fill(url);
      await page.getByLabel('drift').check();
      await page.getByRole('button', { name: 'Add channel' }).click();
      await page.waitForURL(/notice=created$/);
      assert.match(
        (await page.getByRole('row', { name: /very-long-segment/ }).textContent()) ?? '',
        /Healthy no delivery yet/,
      );

      await page.getByRole('link', { name: url, exact: true }).click();
      await page.getByRole('button', { name: 'Check connection' }).click();
      const result = page.getByRole('status').filter({ hasText: 'No request was sent' });
      assert.match(
        (await result.textContent()) ?? '',
        /The receiver can be reached\..*TCP connection OK.*TLS handshake Skipped.*Not used: plain http/s,
      );
      assert.equal(rx.received.length, 0, 'checking posts nothing');
      await shoot(page, `channel-checked-${dialect}`);

      rx.answer = () => ({ status: 503, body: 'receiver down for maintenance' });
      const messages = [
        await buildMessage(t, { headline: 'First message that will not arrive' }),
        await buildMessage(t, { headline: 'Second message that will not arrive' }),
      ];
      for (let i = 0; i < 5; i++) {
        await worker.drain();
        t.clock.advance(45 * 60_000);
      }
      await page.goto(`${server.url}/settings?tab=channels`);
      const row = page.getByRole('row', { name: /very-long-segment/ });
      assert.match(
        (await row.textContent()) ?? '',
        /Failing\s*since .+ UTC; 10 consecutive failures\s*Last error: HTTP 503/,
      );
      await shoot(page, `channels-failing-${dialect}`);

      await page.getByRole('link', { name: url, exact: true }).click();
      assert.match((await page.textContent('main')) ?? '', /2 dead-lettered deliveries are waiting/);
      await shoot(page, `channel-detail-${dialect}`);

      await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
      await page.getByLabel('Channel').selectOption({ label: url });
      await page.getByRole('button', { name: 'Show' }).click();
      await page.getByRole('link', { name: 'Dead-lettered' }).click();
      assert.equal(await page.getByRole('row').filter({ hasText: 'Dead-lettered after 5 attempts' }).count(), 2);
      await shoot(page, `deliveries-dead-${dialect}`);

      rx.answer = () => ({ status: 200 });
      await page.getByRole('link', { name: 'Re-send all 2…' }).click();
      assert.match(
        (await page.getByRole('heading', { level: 2 }).last().textContent()) ?? '',
        /^Re-send 2 dead-lettered deliveries to http:\/\/127\.0\.0\.1:\d+\/hooks\/very-long-segment.*end\?$/,
      );
      await shoot(page, `resend-confirm-${dialect}`);
      await page.getByRole('button', { name: 'Re-send 2 deliveries' }).click();
      await page.waitForURL(/notice=resent-all&count=2$/);
      assert.match((await page.getByRole('status').first().textContent()) ?? '', /Re-sent 2 dead-lettered deliveries/);

      await worker.drain();
      assert.equal(
        rx.received.filter((r) => r.path.endsWith('end')).length,
        12,
        'ten failed attempts, then the two re-sends',
      );
      await page.goto(`${server.url}/messages/${messages[0]}`);
      assert.match((await page.textContent('main')) ?? '', /1 delivered, 0 pending, 1 dead-lettered\./);
      await shoot(page, `message-deliveries-${dialect}`);
    } finally {
      await worker.stop();
      await browser.close();
      await server.close();
    }
  });
});

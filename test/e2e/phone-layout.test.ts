// Home, Profile and the team list on a phone (390 px) for an account with the longest username (64 characters): the
// page never scrolls sideways, the header cuts the name with an ellipsis (the full name in its title), a wrapped link
// in the home page's list keeps its bullet by its first line, and the sessions and tokens tables stack so every button
// is on screen. Revoking a token goes through its confirmation step.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { createToken } from '../../src/features/tokens/tokens.service.ts';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { buildInvitation } from '../helpers/team-factories.ts';

/** 64 characters, the maximum, with no place to break. */
const LONG_USERNAME = 'maximilianalexanderhohenzollernsigmaringenoperationsteamlead2026';
const PHONE = { width: 390, height: 844 };

/** The document's width as laid out now: more than the viewport means the page scrolls sideways. */
const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

/** Asserts the page at `path` fits a 390 px viewport. */
async function fitsPhone(page: Page, path: string): Promise<void> {
  assert.ok((await pageWidth(page)) <= PHONE.width, `${path} is ${await pageWidth(page)} px wide at ${PHONE.width} px`);
}

/** Asserts the element's box lies within the viewport's width, inside no box that scrolls sideways. */
async function onScreen(what: string, box: { x: number; width: number } | null): Promise<void> {
  assert.ok(box, `${what} is rendered`);
  assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `${what} spans ${box.x}..${box.x + box.width} px`);
}

forEachDialect((getDb) => {
  test('a 64-character username on a phone: no sideways scrolling on Home and Profile, stacked tables, revoking asks first', {
    skip: browserSkip,
  }, async () => {
    assert.equal([...LONG_USERNAME].length, 64);
    const t = buildTestApp(getDb());
    const me = await buildAccount(t, { username: LONG_USERNAME, role: 'admin' });
    await createToken(t.deps, me.id, { name: 'ci script', expiry: '90' });
    await createToken(t.deps, me.id, { name: 'deploy bot', expiry: 'never', readOnly: true });
    // Another session, from a browser with a long user agent.
    const other = t.client();
    other.userAgent =
      'Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro Build/UQ1A.240205.004; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/122.0.6261.119';
    await other.get('/login');
    assert.equal((await other.post('/login', { username: me.username, password: me.password })).status, 303);
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext({ viewport: PHONE })).newPage();
      await signInWithBrowser(page, server.url, me, '/');

      // Home: the page fits; the header's name is cut with an ellipsis and carries the full name.
      await fitsPhone(page, '/');
      const name = page.locator('header .username');
      assert.equal(await name.getAttribute('title'), LONG_USERNAME);
      const cut = await name.evaluate((el) => ({
        overflow: getComputedStyle(el).textOverflow,
        clipped: el.scrollWidth > el.clientWidth,
      }));
      assert.deepEqual(cut, { overflow: 'ellipsis', clipped: true }, 'the name is cut with an ellipsis');
      await onScreen('Sign out', await page.locator('header').getByRole('button', { name: 'Sign out' }).boundingBox());

      // Home's list of links: each bullet sits by the first line of its link. The marker sits on its item's first line
      // baseline; a zero-width character put at the start of the item sits there too, so it stands in for the marker.
      const bullets = await page.locator('ul.links li').evaluateAll((items) =>
        items.map((li) => {
          const link = li.querySelector('a')!;
          const probe = document.createElement('span');
          probe.textContent = '\u200b';
          li.insertBefore(probe, li.firstChild);
          const marker = probe.getBoundingClientRect();
          probe.remove();
          const first = document.createRange();
          first.setStart(link.firstChild!, 0);
          first.setEnd(link.firstChild!, 1);
          const firstLine = first.getBoundingClientRect();
          return {
            text: link.textContent,
            lines: Math.round(link.getBoundingClientRect().height / firstLine.height),
            gap: Math.abs(marker.top - firstLine.top),
          };
        }),
      );
      assert.ok(
        bullets.some((b) => b.lines >= 2),
        `a link wraps at 390 px: ${JSON.stringify(bullets)}`,
      );
      for (const b of bullets) assert.ok(b.gap < 4, `the bullet of “${b.text}” is ${b.gap} px off its first line`);

      // Profile: the page fits; each session and each token is one block, its button on screen.
      await page.goto(`${server.url}/profile`);
      await fitsPhone(page, '/profile');
      const sessions = page.locator('#profile-sessions');
      // Still a table to assistive technology: one row per session (the header row is hidden on phones, each cell names
      // its column).
      assert.equal(await sessions.getByRole('row').count(), 2, 'two sessions');
      await onScreen(
        'End this session',
        await sessions.getByRole('button', { name: 'End this session' }).boundingBox(),
      );
      await onScreen(
        'End session',
        await sessions.getByRole('button', { name: 'End session', exact: true }).boundingBox(),
      );
      assert.ok(await sessions.getByText('Browser:').first().isVisible(), 'a stacked cell names its column');
      const tokens = page.locator('#profile-tokens');
      const revoke = tokens.getByRole('link', { name: /^Revoke… “ci script”/ });
      await onScreen('Revoke… ci script', await revoke.boundingBox());

      // Revoking asks first, and says which token; the step fits the phone too.
      await revoke.click();
      await page.waitForURL(/revoke=/);
      const step = page.getByRole('region', { name: /Revoke the token “ci script”/ });
      assert.match((await step.textContent()) ?? '', /This cannot be undone/);
      await fitsPhone(page, '/profile?revoke=…');
      assert.equal(
        (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', me.id).execute()).length,
        2,
        'nothing revoked yet',
      );
      await step.getByRole('button', { name: /^Revoke “ci script”/ }).click();
      await page.waitForURL(/notice=token-revoked/);
      assert.match((await page.textContent('#profile-tokens')) ?? '', /The token no longer works/);
      const left = await t.deps.db.selectFrom('api_tokens').select('name').where('account_id', '=', me.id).execute();
      assert.deepEqual(
        left.map((r) => r.name),
        ['deploy bot'],
      );
      await fitsPhone(page, '/profile?notice=token-revoked');

      // Settings > Team: the accounts table stacks, one block per account with its last sign-in on screen; the
      // long name's own account page fits too.
      await buildInvitation(t, me.id);
      await page.goto(`${server.url}/settings?tab=team`);
      await fitsPhone(page, '/settings?tab=team');
      await onScreen(
        'Revoke (an open invitation)',
        await page.locator('table.invitations').getByRole('button', { name: 'Revoke' }).boundingBox(),
      );
      const mine = page.locator('table.accounts tr', { has: page.getByRole('link', { name: LONG_USERNAME }) });
      await onScreen('Last sign-in', await mine.getByText('Last sign-in:').boundingBox());
      await mine.getByRole('link', { name: LONG_USERNAME }).click();
      await page.waitForURL(/\/settings\/accounts\//);
      await fitsPhone(page, '/settings/accounts/<id>');

      // On a wide screen the name is whole where it fits and nothing overflows either.
      await page.setViewportSize({ width: 1280, height: 800 });
      assert.ok((await pageWidth(page)) <= 1280);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

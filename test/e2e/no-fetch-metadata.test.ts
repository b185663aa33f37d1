// The pages whose URL holds a token (setup, invitation, password reset) in a browser that sends no Fetch Metadata
// (Safari before 16.4): the server then judges a form by its Origin header, so these pages' referrer policy must let
// the browser send this service's origin (no-referrer would make it "null" and refuse every such form), while no
// Referer ever carries the token.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { mintResetLink } from '../../src/features/reset/reset.service.ts';
import { prepareSetupToken } from '../../src/features/setup/setup.service.ts';
import { mintInvitation } from '../../src/features/team/invitations.service.ts';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';

/** Clicks `button` and expects to land on `url`; else fails with what the page said (a refusal names itself). */
async function submit(page: Page, button: string, url: RegExp): Promise<void> {
  await page.getByRole('button', { name: button }).click();
  await page.waitForURL(url, { timeout: 10_000 }).catch(async () => {
    assert.fail(`"${button}" led to ${page.url()}: ${(await page.textContent('main'))?.trim()}`);
  });
}

forEachDialect((getDb) => {
  test('without Fetch Metadata, setup, invitation and reset forms work; their posts carry this origin and no token in a Referer', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const setupToken = await prepareSetupToken(t.deps);
    const seen: { method: string; path: string; origin: string | null; referer: string | null; site: string | null }[] =
      [];
    const server = await serveTestApp(t, {
      fetchMetadata: false,
      seen: (req) =>
        seen.push({
          method: req.method,
          path: new URL(req.url).pathname,
          origin: req.headers.get('origin'),
          referer: req.headers.get('referer'),
          site: req.headers.get('sec-fetch-site'),
        }),
    });
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.url}/setup?token=${setupToken}`);
      await page.getByLabel('Username').fill('operator');
      await page.getByLabel('Password').fill('a sturdy passphrase');
      await submit(page, 'Create administrator', /\/login\?notice=setup-done$/);

      const invitation = await mintInvitation(t.deps, { actorId: null, role: 'viewer', base: server.url });
      assert.ok(invitation.ok);
      const invitee = await (await browser.newContext()).newPage();
      await invitee.goto(invitation.joinLink);
      await invitee.getByLabel('Username').fill('vera');
      await invitee.getByLabel('Password').fill('a sturdy passphrase');
      await submit(invitee, 'Create account', /\/login\?notice=invited$/);

      const vera = await t.deps.db
        .selectFrom('accounts')
        .select('id')
        .where('username', '=', 'vera')
        .executeTakeFirstOrThrow();
      const reset = await mintResetLink(t.deps, { actorId: null, accountId: vera.id, base: server.url });
      assert.ok(reset.ok);
      await invitee.goto(reset.url);
      await invitee.getByLabel('New password').fill('a fresh passphrase');
      await submit(invitee, 'Set new password', /\/login\?notice=password-reset$/);
      // Sign-in (a page with the default same-origin policy) works without Fetch Metadata too.
      await signInWithBrowser(
        invitee,
        server.url,
        { username: 'vera', password: 'a fresh passphrase' },
        '/login/enrol',
      );

      assert.ok(seen.length > 0 && seen.every((r) => r.site === null), 'the app saw no Fetch Metadata');
      const posts = seen.filter((r) => r.method === 'POST' && ['/setup', '/invite', '/reset'].includes(r.path));
      assert.deepEqual(
        posts.map((r) => r.path),
        ['/setup', '/invite', '/reset'],
      );
      for (const post of posts)
        assert.equal(post.origin, server.url, `${post.path} is posted with this origin, not "null"`);
      for (const r of seen)
        assert.doesNotMatch(r.referer ?? '', /token/, `${r.method} ${r.path}: no token in a Referer`);
      assert.ok(
        seen.some((r) => r.referer === `${server.url}/`),
        'token pages send their origin alone as the Referer',
      );
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

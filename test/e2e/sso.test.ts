// The SSO story in a real browser against a real OpenID Provider over HTTPS: an admin declares the provider, a user
// links their identity from Profile, signs out, signs in with the provider's button, and re-links (asked afresh).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { redirectUrisFor } from '../helpers/sso.ts';
import { makeCertificates, PUBLIC_CLIENT_ID, startTestIdp } from '../helpers/test-idp.ts';

forEachDialect((getDb) => {
  test('admin declares a provider; a user links it from Profile, signs out, signs in with its button and re-links', {
    skip: browserSkip,
  }, async () => {
    const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-ca-')));
    const t = buildTestApp(getDb(), { oidcCaFile: certs.caFile });
    const boss = await buildAccount(t, { username: 'boss', role: 'admin' });
    const uma = await buildAccount(t, { username: 'uma' });
    const server = await serveTestApp(t);
    const idp = await startTestIdp({ redirectUris: redirectUrisFor(['corp'], server.url), certs });
    idp.claims.set('uma-at-corp', { email: 'uma@corp.example' });
    const browser = await launchBrowser();
    try {
      // The admin declares the provider and reads the callback URLs to register.
      const admin = await (await browser.newContext()).newPage();
      await signInWithBrowser(admin, server.url, boss);
      await admin.goto(`${server.url}/settings?tab=sso`);
      const create = admin.locator('form.sso-create');
      await create.getByLabel('Display name').fill('Corp IdP');
      await create.getByLabel('Slug').fill('corp');
      await create.getByLabel('Issuer URL').fill(idp.issuer);
      await create.getByLabel('Client ID').fill(PUBLIC_CLIENT_ID);
      await create.getByRole('button', { name: 'Declare provider' }).click();
      await admin.waitForURL(/notice=created$/);
      const main = (await admin.textContent('main')) ?? '';
      assert.ok(main.includes(`${server.url}/login/sso/corp/callback`));
      assert.ok(main.includes(`${server.url}/profile/sso/corp/link/callback`));
      assert.match(main, /secret: none/);

      // The user links the identity from Profile (the IdP's certificate comes from the test CA).
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const user = await context.newPage();
      await signInWithBrowser(user, server.url, uma);
      await user.goto(`${server.url}/profile`);
      // "Confirm it's you" first: a linked identity signs in as the account.
      assert.equal(await user.getByRole('link', { name: 'Link Corp IdP' }).count(), 0);
      await user.locator('#profile-sso').getByRole('link', { name: 'Confirm it’s you' }).click();
      await user.locator('#profile-confirm').getByLabel('Password').fill(uma.password);
      await user.locator('#profile-confirm').getByRole('button', { name: 'Confirm' }).click();
      await user.waitForURL(/notice=confirmed#profile-confirm/);
      await user.getByRole('link', { name: 'Link Corp IdP' }).click();
      await user.waitForURL(`${idp.issuer}/interaction/**`);
      await user.getByLabel('Subject').fill('uma-at-corp');
      await user.getByRole('button', { name: 'Continue' }).click();
      await user.waitForURL(/\/profile\?sso=linked/);
      assert.match((await user.textContent('main')) ?? '', /uma@corp\.example/);

      // Signs out, then signs in with the provider's button (the IdP still knows the browser: no second prompt).
      await user.getByRole('button', { name: 'Sign out' }).click();
      await user.waitForURL(/\/login\?notice=signed-out$/);
      await user.getByRole('link', { name: 'Sign in with Corp IdP' }).click();
      await user.waitForURL(`${server.url}/`);
      assert.match((await user.textContent('header')) ?? '', /uma/);

      // Unlinking ends what the identity opened, this session too: the user signs in again with the password.
      await user.goto(`${server.url}/profile`);
      await user.getByRole('button', { name: 'Unlink Corp IdP' }).click();
      await user.waitForURL(/\/login\?notice=unlinked$/);
      assert.match((await user.textContent('main')) ?? '', /Identity unlinked\. You had signed in through it/);
      await signInWithBrowser(user, server.url, uma);
      // Linking again asks the provider afresh (prompt=login) although the browser is signed in there.
      await user.goto(`${server.url}/profile`);
      await user.locator('#profile-sso').getByRole('link', { name: 'Confirm it’s you' }).click();
      await user.locator('#profile-confirm').getByLabel('Password').fill(uma.password);
      await user.locator('#profile-confirm').getByRole('button', { name: 'Confirm' }).click();
      await user.waitForURL(/notice=confirmed#profile-confirm/);
      await user.getByRole('link', { name: 'Link Corp IdP' }).click();
      await user.waitForURL(`${idp.issuer}/interaction/**`);
      assert.equal(idp.interactions.at(-1)?.prompt, 'login');
      await user.getByLabel('Subject').fill('uma-at-corp');
      await user.getByRole('button', { name: 'Continue' }).click();
      await user.waitForURL(/\/profile\?sso=linked/);

      // The admin sees the binding.
      await admin.goto(`${server.url}/settings?tab=sso`);
      const row = admin.getByRole('row', { name: /uma@corp\.example/ });
      assert.match((await row.textContent()) ?? '', /Corp IdP.*uma/s);
    } finally {
      await browser.close();
      await server.close();
      await idp.close();
    }
  });
});

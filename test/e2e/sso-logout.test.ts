// Signing out with the provider in a real browser against a real OpenID Provider: with "Sign out at the provider too"
// on, Sign out ends the svc session and carries the browser on to the provider's sign-out page and back to /login
// (under svc's CSP, whose form-action 'self' Chromium applies to a form post's redirects); and signing out at the
// provider ends the svc session through the provider's back-channel logout.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { bindIdentity, buildProvider, redirectUrisFor } from '../helpers/sso.ts';
import { makeCertificates, startTestIdp } from '../helpers/test-idp.ts';

forEachDialect((getDb) => {
  test('Sign out ends the session, then signs out at the provider and comes back to /login; signing out at the provider ends the svc session', {
    skip: browserSkip,
  }, async () => {
    const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-logout-')));
    const t = buildTestApp(getDb(), { oidcCaFile: certs.caFile });
    // The IdP stamps its logout tokens with the real time; svc checks them by its clock.
    t.clock.t = Date.now();
    const boss = await buildAccount(t, { username: 'boss', role: 'admin' });
    const uma = await buildAccount(t, { username: 'uma' });
    const server = await serveTestApp(t);
    const idp = await startTestIdp({
      redirectUris: redirectUrisFor(['corp'], server.url),
      certs,
      logout: {
        postLogoutRedirectUris: [`${server.url}/login`],
        backchannelLogoutUri: `${server.url}/login/sso/corp/backchannel-logout`,
      },
    });
    const corp = await buildProvider(t, idp, { slug: 'corp', createdBy: boss.id, displayName: 'Corp IdP' });
    await bindIdentity(t, { providerId: corp.id, sub: 'uma-at-corp', accountId: uma.id, id: 'b-uma', label: 'uma' });
    const sessions = () => t.deps.db.selectFrom('sessions').select('id_hash').execute();
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
      const signInAtCorp = async () => {
        await page.goto(`${server.url}/login`);
        await page.getByRole('link', { name: 'Sign in with Corp IdP' }).click();
        await page.waitForURL(`${idp.issuer}/interaction/**`);
        await page.getByLabel('Subject').fill('uma-at-corp');
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.waitForURL(`${server.url}/`);
      };

      // Off (the default): signing out at the provider itself ends the svc session through the back channel.
      await signInAtCorp();
      assert.equal((await sessions()).length, 1);
      await page.goto(`${idp.issuer}/session/end`);
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL(`${idp.issuer}/session/end/success`);
      assert.deepEqual(idp.backchannelLogouts.at(-1), { clientId: 'svc-public' });
      assert.equal((await sessions()).length, 0);
      await page.goto(`${server.url}/profile`);
      await page.waitForURL(`${server.url}/login`);

      // On: Sign out in svc continues to the provider's sign-out page and comes back to /login.
      await t.deps.db.updateTable('sso_providers').set({ sign_out_at_provider: 1 }).execute();
      await signInAtCorp();
      const csp = (await page.request.get(`${server.url}/`)).headers()['content-security-policy'] ?? '';
      assert.match(csp, /form-action 'self'/, 'the page the Sign out form sits on allows posts to svc only');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${idp.issuer}/session/end?**`);
      assert.equal((await sessions()).length, 0, 'the svc session ended before the browser left');
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL(/\/login\?state=/);
      assert.ok(page.url().startsWith(`${server.url}/login?state=`));
      assert.match((await page.textContent('main')) ?? '', /You are signed out\./);

      // The provider's session ended too: signing in with it asks at the provider again.
      await page.getByRole('link', { name: 'Sign in with Corp IdP' }).click();
      await page.waitForURL(`${idp.issuer}/interaction/**`);
      assert.equal(idp.interactions.at(-1)?.prompt, 'login');
    } finally {
      await browser.close();
      await server.close();
      await idp.close();
    }
  });
});

// Every page, as admin and as viewer, empty and full, and with a form error shown, loaded in Chromium
// at 1280 and 390 px and checked with axe-core (WCAG 2.0/2.1/2.2 A and AA, target-size included): zero violations,
// and no horizontal overflow at 390 px. axe is injected in a context that bypasses the CSP, for the check only.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { totpCode } from '../../src/features/second-factor/totp.ts';
import { prepareSetupToken } from '../../src/features/setup/setup.service.ts';
import { CONFIRMABLE } from '../../src/features/team/account-confirm.views.tsx';
import { mintResetLink } from '../../src/features/team/team.service.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { browserSkip, launchBrowser, serveTestApp, signInWithBrowser } from '../helpers/browser.ts';
import { forEachDialect } from '../helpers/db.ts';
import { buildAccount } from '../helpers/factories.ts';
import { seedFull, type FullSeed } from '../helpers/pages.ts';
import { closedPort } from '../helpers/ports.ts';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];
const WIDTHS = [1280, 390];

/** One axe violation, flattened for the failure message. */
interface Found {
  page: string;
  width: number;
  rule: string;
  impact: string;
  targets: string;
}

/**
 * Collects what every checked page found; `summary` is printed per page and width for the closing note. With `dark`
 * on, each page is checked once more at 1280 px in the dark colour scheme (the same page, only the emulated
 * prefers-color-scheme changes), colour contrast included.
 */
class Checker {
  found: Found[] = [];
  overflow: string[] = [];
  checked = 0;
  dark = false;
  constructor(private readonly dialect: string) {}

  /** Checks the page as it is now (already loaded) at each width: axe, and the page's width at 390 px. */
  async check(page: Page, label: string): Promise<void> {
    await page.addScriptTag({ content: axeSource });
    if (this.dark) await this.checkDark(page, label);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      const violations = await this.axe(page, label, width);
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
      }));
      const overflows = width === 390 && scrollWidth > innerWidth;
      if (overflows) this.overflow.push(`${label}: ${scrollWidth}px wide at 390`);
      this.checked++;
      console.log(
        `pages ${this.dialect} | ${label} | ${width}px | violations ${violations}${overflows ? ` | overflow ${scrollWidth}px` : ''}`,
      );
    }
  }

  /** The dark pass, first, so the page is left at the last width as before. */
  private async checkDark(page: Page, label: string): Promise<void> {
    await page.setViewportSize({ width: WIDTHS[0]!, height: 900 });
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      const violations = await this.axe(page, `${label} (dark)`, WIDTHS[0]!);
      this.checked++;
      console.log(`pages ${this.dialect} | ${label} | ${WIDTHS[0]}px dark | violations ${violations}`);
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  }

  /** Runs axe on the page as laid out now and records its violations; returns how many. */
  private async axe(page: Page, label: string, width: number): Promise<number> {
    const result = (await page.evaluate(
      (tags) =>
        (window as unknown as { axe: { run(ctx: Document, o: object): Promise<unknown> } }).axe.run(document, {
          runOnly: { type: 'tag', values: tags },
          rules: { 'target-size': { enabled: true } },
          resultTypes: ['violations'],
        }),
      TAGS,
    )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
    for (const v of result.violations) {
      this.found.push({
        page: label,
        width,
        rule: v.id,
        impact: v.impact,
        targets: v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', '),
      });
    }
    return result.violations.length;
  }

  /** Loads `path` and checks it. */
  async visit(page: Page, base: string, path: string, label: string): Promise<void> {
    await page.goto(base + path);
    await this.check(page, label);
  }
}

/** A browser context for the checks: CSP bypassed so axe can be injected (the pages themselves allow no script). */
function context(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ bypassCSP: true });
}

/** The signed-in pages each role reads; `full` adds the pages that need rows. */
function signedInPages(role: 'admin' | 'viewer', ids: { messageId?: string; accountId?: string }): [string, string][] {
  const pages: [string, string][] = [
    ['home', '/'],
    ['inbox', '/inbox'],
    ['profile', '/profile'],
  ];
  if (ids.messageId)
    pages.push(['message', `/messages/${ids.messageId}`], ['inbox filtered', '/inbox?show=unread&class=drift']);
  else pages.push(['not found', '/no-such-page']);
  if (role === 'viewer') pages.push(['settings refused', '/settings']);
  if (role === 'admin') {
    for (const tab of ['team', 'sso', 'channels', 'deliveries', 'audit'])
      pages.push([`settings ${tab}`, `/settings?tab=${tab}`]);
    if (ids.accountId) pages.push(['account', `/settings/accounts/${ids.accountId}`]);
  }
  return pages;
}

/** Signs in `who` in a fresh checking context and checks each of its pages. */
async function checkAs(
  browser: Browser,
  base: string,
  checker: Checker,
  who: { username: string; password: string },
  label: string,
  pages: [string, string][],
) {
  const ctx = await context(browser);
  try {
    const page = await ctx.newPage();
    await signInWithBrowser(page, base, who);
    for (const [name, path] of pages) await checker.visit(page, base, path, `${label} ${name}`);
  } finally {
    await ctx.close();
  }
}

/** Pages answered after a failed form post, each with its error summary or message shown. */
async function checkFormErrors(
  browser: Browser,
  base: string,
  checker: Checker,
  admin: { username: string; password: string },
) {
  const ctx = await context(browser);
  try {
    const page = await ctx.newPage();
    await page.goto(`${base}/login`);
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Incorrect username or password.').waitFor();
    await checker.check(page, 'error: sign-in refused');

    await signInWithBrowser(page, base, admin);
    const declare = async (slug: string, issuer: string) => {
      await page.goto(`${base}/settings?tab=sso`);
      const create = page.locator('form.sso-create');
      await create.getByLabel('Display name').fill('Broken');
      await create.getByLabel('Slug').fill(slug);
      await create.getByLabel('Issuer URL').fill(issuer);
      await create.getByLabel('Client ID').fill('svc');
      await create.getByRole('button', { name: 'Declare provider' }).click();
    };
    await declare('Not A Slug', 'https://idp.example.com');
    await page.locator('.error-summary').waitFor();
    await checker.check(page, 'error: sso form');
    await declare('later', `https://127.0.0.1:${await closedPort()}`);
    await page.getByLabel('Save anyway: the provider is not reachable from here yet').waitFor();
    await checker.check(page, 'error: sso discovery');

    await page.goto(`${base}/settings?tab=channels`);
    await page.getByLabel('Channel URL').fill('http://localhost:9/hook');
    await page.getByLabel('drift').check();
    await page.getByRole('button', { name: 'Add channel' }).click();
    await page.getByText('is a host name, not an IP address').first().waitFor();
    // Anchored at the form without script: the summary has the focus and is on screen, below the channel list.
    const summary = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const box = el.getBoundingClientRect();
      return { cls: el.className, top: box.top, scrolled: window.scrollY, height: window.innerHeight };
    });
    assert.equal(summary.cls, 'error-summary', 'the error summary has the focus');
    assert.ok(
      summary.scrolled > 0 && summary.top >= 0 && summary.top < summary.height,
      `the summary is in view: ${JSON.stringify(summary)}`,
    );
    await page.locator('.error-summary a').first().click();
    assert.equal(
      await page.evaluate(() => (document.activeElement as HTMLInputElement).name),
      'url',
      'a summary link leads to its field',
    );
    await checker.check(page, 'error: channel form');
  } finally {
    await ctx.close();
  }
}

/**
 * The confirmation steps (a boxed question before an act): suspending an account, re-sending a channel's dead letters.
 */
async function checkConfirmations(browser: Browser, base: string, checker: Checker, t: TestApp, seed: FullSeed) {
  const failing = await t.deps.db
    .selectFrom('channels')
    .select('id')
    .where('consecutive_failures', '>', 0)
    .executeTakeFirstOrThrow();
  const ctx = await context(browser);
  try {
    const page = await ctx.newPage();
    await signInWithBrowser(page, base, seed.admin);
    for (const act of CONFIRMABLE) {
      const to = act === 'reassign' ? `&to=${seed.admin.id}` : '';
      await checker.visit(page, base, `/settings/accounts/${seed.viewer.id}?confirm=${act}${to}`, `confirm: ${act}`);
    }
    await checker.visit(page, base, `/settings/deliveries/resend-all?channel=${failing.id}`, 'confirm: re-send all');
    await checker.visit(page, base, `/settings/channels/${failing.id}`, 'full admin channel page');
    await checker.visit(page, base, `/settings?tab=channels&edit=${failing.id}`, 'full admin channel edit');
  } finally {
    await ctx.close();
  }
}

/** The sign-in steps after the password (second factor owed, enrolment offered) and the reset link's pages. */
async function checkSignInSteps(browser: Browser, base: string, checker: Checker, t: TestApp) {
  const withTotp = await buildAccount(t, { role: 'viewer', username: 'totp-user' });
  await t.deps.db
    .updateTable('accounts')
    .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
    .where('id', '=', withTotp.id)
    .execute();
  const enrolling = await buildAccount(t, { role: 'viewer', username: 'new-user', enrolPrompt: true });
  const reset = await mintResetLink(t.deps, { actorId: null, accountId: enrolling.id, base: '' });
  assert.ok(reset.ok);
  for (const [who, path, label] of [
    [withTotp, '/login/totp', 'sign-in: second factor owed'],
    [enrolling, '/login/enrol', 'sign-in: second factor offered'],
  ] as const) {
    const ctx = await context(browser);
    try {
      const page = await ctx.newPage();
      await page.goto(`${base}/login`);
      await page.getByLabel('Username').fill(who.username);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === path);
      await checker.check(page, label);
    } finally {
      await ctx.close();
    }
  }
  const ctx = await context(browser);
  try {
    const page = await ctx.newPage();
    await checker.visit(page, base, reset.url, 'signed out: reset link');
    await checker.visit(page, base, '/reset?token=not-a-live-reset-link', 'error: reset link not valid');
  } finally {
    await ctx.close();
  }
}

/**
 * Passkey pages: the second-factor step of an account with TOTP and a passkey, and Profile's passkeys (the list, the
 * rename and remove steps, the page that adds one).
 */
async function checkPasskeyPages(browser: Browser, base: string, checker: Checker, t: TestApp) {
  const holder = await buildAccount(t, { role: 'viewer', username: 'passkey-holder' });
  const secret = 'JBSWY3DPEHPK3PXP';
  await t.deps.db
    .updateTable('accounts')
    .set({ totp_secret: secret, totp_enabled: 1 })
    .where('id', '=', holder.id)
    .execute();
  for (const [id, name, synced] of [
    ['pages-key-1', 'Work laptop with a rather long descriptive name', true],
    ['pages-key-2', 'Blue security key', false],
  ] as const) {
    await t.deps.db
      .insertInto('passkeys')
      .values({
        id,
        account_id: holder.id,
        credential_id: Buffer.from(id).toString('base64url'),
        public_key: 'AA',
        counter: 0,
        transports: synced ? 'internal,hybrid' : 'usb',
        device_type: synced ? 'multiDevice' : 'singleDevice',
        backed_up: synced ? 1 : 0,
        name,
        created_at: t.clock.now(),
        last_used_at: synced ? t.clock.now() : null,
      })
      .execute();
  }
  const ctx = await context(browser);
  try {
    const page = await ctx.newPage();
    await signInWithBrowser(page, base, holder, '/login/totp');
    await checker.check(page, 'sign-in: passkey or code owed');
    await page.getByLabel('Authentication code').fill(totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${base}/`);
    await page.goto(`${base}/profile`);
    const confirm = page.locator('#profile-confirm');
    await confirm.getByLabel('Password or authenticator code').fill(holder.password);
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(/notice=confirmed/);
    await checker.visit(page, base, '/profile#profile-passkeys', 'profile: passkeys listed');
    await checker.visit(page, base, '/profile?rename-passkey=pages-key-1#passkey-rename', 'profile: rename a passkey');
    await checker.visit(page, base, '/profile?remove-passkey=pages-key-2#passkey-remove', 'profile: remove a passkey');
    await checker.visit(page, base, '/profile/passkeys/add', 'profile: add a passkey');
  } finally {
    await ctx.close();
  }
}

/** The first-run pages: setup with a valid and with a wrong token, and the sign-in page while setup is pending. */
async function checkFirstRun(browser: Browser, base: string, checker: Checker, t: TestApp) {
  const token = await prepareSetupToken(t.deps);
  const ctx = await context(browser);
  try {
    const page = await ctx.newPage();
    await checker.visit(page, base, `/setup?token=${token}`, 'first run: setup');
    await checker.visit(page, base, '/setup?token=not-the-right-token-at-all', 'error: setup token');
    await checker.visit(page, base, '/login', 'first run: sign-in pending');
  } finally {
    await ctx.close();
  }
}

forEachDialect((getDb, dialect) => {
  test('every page has zero axe violations at 1280 and 390 px and no sideways scroll at 390', {
    skip: browserSkip,
  }, async () => {
    const t = buildTestApp(getDb());
    const server = await serveTestApp(t);
    const browser = await launchBrowser();
    const checker = new Checker(dialect);
    try {
      await checkFirstRun(browser, server.url, checker, t);

      // Empty: two accounts, nothing else.
      const admin = await buildAccount(t, { role: 'admin', username: 'empty-admin' });
      const viewer = await buildAccount(t, { role: 'viewer', username: 'empty-viewer' });
      await checkAs(
        browser,
        server.url,
        checker,
        admin,
        'empty admin',
        signedInPages('admin', { accountId: viewer.id }),
      );
      await checkAs(browser, server.url, checker, viewer, 'empty viewer', signedInPages('viewer', {}));

      // Full: messages, channels (one failing), deliveries with a dead letter, invitations, an SSO provider. From here
      // on every page is also checked in the dark scheme, and so are the confirmation steps that only show there.
      const seed = await seedFull(t);
      checker.dark = true;
      const anon = await context(browser);
      const page = await anon.newPage();
      await checker.visit(page, server.url, '/login', 'signed out: sign-in');
      await checker.visit(page, server.url, `/invite?token=${seed.inviteToken}`, 'signed out: invitation');
      await anon.close();
      await checkAs(
        browser,
        server.url,
        checker,
        seed.admin,
        'full admin',
        signedInPages('admin', { messageId: seed.deadMessageId, accountId: seed.viewer.id }),
      );
      await checkAs(
        browser,
        server.url,
        checker,
        seed.viewer,
        'full viewer',
        signedInPages('viewer', { messageId: seed.deadMessageId }),
      );

      await checkFormErrors(browser, server.url, checker, seed.admin);
      await checkConfirmations(browser, server.url, checker, t, seed);
      await checkSignInSteps(browser, server.url, checker, t);
      await checkPasskeyPages(browser, server.url, checker, t);
    } finally {
      await browser.close();
      await server.close();
    }
    console.log(
      `pages ${dialect} | ${checker.checked} checks | ${checker.found.length} violations | ${checker.overflow.length} overflowing`,
    );
    assert.ok(checker.checked >= 60, `checked ${checker.checked} page views`);
    assert.deepEqual(checker.found, [], 'axe violations');
    assert.deepEqual(checker.overflow, [], 'pages wider than a 390 px screen');
  });
});

// Browser tests: playwright-core driving Debian's Chromium against the app served on loopback.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestApp } from './app.ts';

/** Debian's Chromium; browser tests skip themselves with a reason when it is absent. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. Pass as `test(name, { skip }, fn)`. */
export const browserSkip: string | undefined = fs.existsSync(CHROMIUM_PATH)
  ? undefined
  : `Chromium not installed at ${CHROMIUM_PATH} (apt-get install chromium)`;

/** Launches headless Chromium with the flags this machine needs (no sandbox as root, no background network). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

/**
 * Serves the test app over real HTTP on 127.0.0.1 with a free port. With `fetchMetadata: false` the app never sees the
 * browser's Sec-Fetch-* headers, as with a browser that sends none (Safari before 16.4); `seen` receives each request
 * as the app got it. With `localhost`, the URL names the host `localhost` (still served on 127.0.0.1): WebAuthn needs a
 * domain for its relying-party id, and localhost is a secure context over plain HTTP.
 */
export async function serveTestApp(
  t: TestApp,
  options: { fetchMetadata?: boolean; seen?: (req: Request) => void; localhost?: boolean } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const fetch: typeof t.app.fetch = (req, ...rest) => {
    if (options.fetchMetadata === false) {
      const headers = new Headers([...req.headers].filter(([name]) => !name.startsWith('sec-fetch-')));
      req = new Request(req, { headers });
    }
    options.seen?.(req);
    return t.app.fetch(req, ...rest);
  };
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.localhost ? 'localhost' : '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Signs in through the real login form (fields found by their labels) and waits until the browser lands on `landsOn`:
 * the home page, or the second-factor step the account owes.
 */
export async function signInWithBrowser(
  page: Page,
  baseUrl: string,
  who: { username: string; password: string },
  landsOn = '/',
): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${baseUrl}${landsOn}`);
}

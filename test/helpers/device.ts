// Test shortcuts for the device cookie: fill a username's per-account limit, and a browser that signed in before.
import assert from 'node:assert/strict';
import type { TestApp, TestClient } from './app.ts';
import { signIn } from './factories.ts';

// Tests in a file share one database and start at the same clock time: each bot gets an address of its own.
let bots = 0;

/** 5 failures from each of 10 addresses: 50 failures on the username, so its per-account limit is reached. */
export async function lockUsername(t: TestApp, username: string): Promise<void> {
  for (let a = 0; a < 10; a++) {
    const bot = t.client();
    bot.address = `198.18.${bots++}.1`;
    for (let i = 0; i < 5; i++)
      assert.equal((await bot.post('/login', { username, password: `guess-${a}-${i}` })).status, 401);
  }
}

/** A client at `address` that signed in as `account` and signed out again: it keeps only its device cookie. */
export async function returningClient(
  t: TestApp,
  account: { username: string; password: string },
  address: string,
): Promise<TestClient> {
  const c = await signIn(t, account);
  c.address = address;
  await c.post('/logout');
  assert.deepEqual([...c.cookies.keys()], ['svc_device']);
  return c;
}

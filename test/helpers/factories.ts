// Factories for rows tests need, and a shortcut to a signed-in client.
import crypto from 'node:crypto';
import { newId, systemRandom } from '../../src/deps.ts';
import { insertAccount } from '../../src/features/auth/accounts.repo.ts';
import { hashPassword } from '../../src/features/auth/passwords.ts';
import type { TestApp, TestClient } from './app.ts';

/** A default password for test accounts. */
export const TEST_PASSWORD = 'correct horse battery';

/** Inserts an account (enrolment prompt off unless asked) and returns its id and credentials. */
export async function buildAccount(
  t: TestApp,
  opts: { username?: string; role?: 'admin' | 'viewer'; password?: string; enrolPrompt?: boolean } = {},
): Promise<{ id: string; username: string; password: string }> {
  const username = opts.username ?? `user-${crypto.randomBytes(4).toString('hex')}`;
  const password = opts.password ?? TEST_PASSWORD;
  const id = newId(systemRandom);
  await insertAccount(t.deps.db, {
    id,
    username,
    password_hash: await hashPassword(password),
    role: opts.role ?? 'viewer',
    created_at: t.clock.now(),
  });
  if (!opts.enrolPrompt)
    await t.deps.db.updateTable('accounts').set({ totp_enrol_prompt: 0 }).where('id', '=', id).execute();
  return { id, username, password };
}

/** A client signed in with password as the given account (which must not owe a second factor). */
export async function signIn(t: TestApp, account: { username: string; password: string }): Promise<TestClient> {
  const client = t.client();
  await client.get('/login');
  const res = await client.post('/login', { username: account.username, password: account.password });
  if (res.status !== 303) throw new Error(`sign-in failed with ${res.status}`);
  await client.get(res.location!);
  return client;
}

/** Builds an account of the role and returns a client signed in as it. */
export async function signedInAs(t: TestApp, role: 'admin' | 'viewer') {
  const account = await buildAccount(t, { role });
  return { account, client: await signIn(t, account) };
}

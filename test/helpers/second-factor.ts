// Test shortcuts for the second factor: enrol an account directly, and sign in through the two-factor step.
import { sha256 } from '../../src/deps.ts';
import { confirmIdentity } from '../../src/features/second-factor/reauth.service.ts';
import { confirmEnrolment, startEnrolment } from '../../src/features/second-factor/second-factor.service.ts';
import { createSession, endSession } from '../../src/features/auth/sessions.service.ts';
import { totpCode } from '../../src/features/second-factor/totp.ts';
import type { TestApp, TestClient } from './app.ts';

/** The authenticator code for `secret` at the test clock's now. */
export function codeNow(t: TestApp, secret: string): string {
  return totpCode(secret, t.clock.now());
}

/**
 * Turns TOTP on for the account (as Profile would, from a session of its own that then ends) and moves the clock past
 * the confirming step.
 */
export async function enrolTotp(
  t: TestApp,
  account: { id: string; password: string },
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const owner = {
    accountId: account.id,
    sessionIdHash: sha256(await createSession(t.deps, account.id, 'full', 'enrolTotp helper')),
  };
  const confirmedIdentity = await confirmIdentity(t.deps, { ...owner, secret: account.password, address: '127.0.0.1' });
  if (!confirmedIdentity.ok) throw new Error(`password not confirmed: ${confirmedIdentity.reason}`);
  const started = await startEnrolment(t.deps, owner);
  if (!started.ok) throw new Error(`enrolment did not start: ${started.reason}`);
  const confirmed = await confirmEnrolment(t.deps, { ...owner, code: totpCode(started.pending.secret, t.clock.now()) });
  if (!confirmed.ok) throw new Error(`enrolment not confirmed: ${confirmed.reason}`);
  await endSession(t.deps, owner.sessionIdHash);
  t.clock.advance(30_000);
  return { secret: started.pending.secret, recoveryCodes: confirmed.recoveryCodes ?? [] };
}

/** A client that gave the password and now stands at the two-factor step. */
export async function atTotpStep(t: TestApp, account: { username: string; password: string }): Promise<TestClient> {
  const client = t.client();
  await client.get('/login');
  const res = await client.post('/login', { username: account.username, password: account.password });
  if (res.location !== '/login/totp')
    throw new Error(`expected the two-factor step, got ${res.status} ${res.location}`);
  await client.get('/login/totp');
  return client;
}

/** Signs in with password and the current code; the clock then moves to the next step so the next code is fresh. */
export async function signInWithTotp(
  t: TestApp,
  account: { username: string; password: string },
  secret: string,
): Promise<TestClient> {
  const client = await atTotpStep(t, account);
  const res = await client.post('/login/totp', { code: totpCode(secret, t.clock.now()) });
  if (res.status !== 303 || res.location !== '/') throw new Error(`two-factor step failed with ${res.status}`);
  t.clock.advance(30_000);
  return client;
}

/** A client that has given its password and stands at the enrolment offer (the account has no second factor yet). */
export async function atEnrolStep(t: TestApp, account: { username: string; password: string }): Promise<TestClient> {
  const client = t.client();
  await client.get('/login');
  const res = await client.post('/login', { username: account.username, password: account.password });
  if (res.location !== '/login/enrol')
    throw new Error(`expected the enrolment step, got ${res.status} ${res.location}`);
  await client.get('/login/enrol');
  return client;
}

/** The set-up key shown on an enrolment page (grouped in fours there), without its spaces; undefined when not shown. */
export function keyOn(page: string): string | undefined {
  return /id="totp-secret">([A-Z2-7 ]+)</.exec(page)?.[1]?.replaceAll(' ', '');
}

/** The recovery codes listed on a page (none when it shows none). */
export function codesOn(page: string): string[] {
  return [...page.matchAll(/<li><code class="secret">([0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{5})<\/code><\/li>/g)].map(
    (m) => m[1]!,
  );
}

/** From the enrolment offer at sign-in: starts, reads the key off the page after the redirect. */
export async function startEnrolmentAtSignIn(client: TestClient): Promise<string> {
  const start = await client.post('/login/enrol', { action: 'start' });
  if (start.location !== '/login/enrol') throw new Error(`enrolment did not start: ${start.status} ${start.location}`);
  const key = keyOn((await client.get('/login/enrol')).text);
  if (!key) throw new Error('the key is not shown');
  return key;
}

/** From Profile: confirms the password, starts, reads the key off the page after the redirect. */
export async function startEnrolmentInProfile(client: TestClient, password: string): Promise<string> {
  await client.get('/profile');
  const confirmed = await client.post('/profile/reauth', { secret: password, section: 'second-factor' });
  if (confirmed.status !== 303) throw new Error(`confirmation refused: ${confirmed.status}`);
  await client.get('/profile');
  const start = await client.post('/profile/totp/start');
  if (start.location !== '/profile/totp') throw new Error(`enrolment did not start: ${start.status} ${start.location}`);
  const key = keyOn((await client.get('/profile/totp')).text);
  if (!key) throw new Error('the key is not shown');
  return key;
}

/** Posts the confirming code (to /login/enrol or /profile/totp/confirm) and reads the codes off the page after it. */
export async function finishEnrolment(
  t: TestApp,
  client: TestClient,
  path: '/login/enrol' | '/profile/totp/confirm',
  secret: string,
): Promise<string[]> {
  const fields: Record<string, string> = { code: totpCode(secret, t.clock.now()) };
  if (path === '/login/enrol') fields.action = 'confirm';
  const done = await client.post(path, fields);
  if (done.status !== 303 || !done.location?.startsWith('/profile/recovery-codes'))
    throw new Error(`enrolment not confirmed: ${done.status} ${done.location}`);
  return codesOn((await client.get(done.location)).text);
}

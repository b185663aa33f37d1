// Test shortcuts for the second factor: enrol an account directly, and sign in through the two-factor step.
import { sha256 } from '../../src/deps.ts';
import { confirmEnrolment, startEnrolment } from '../../src/features/auth/second-factor.service.ts';
import { createSession, endSession } from '../../src/features/auth/sessions.service.ts';
import { totpCode } from '../../src/features/auth/totp.ts';
import type { TestApp, TestClient } from './app.ts';

/** Turns TOTP on for the account (as Profile would, from a session of its own that then ends) and moves the clock past the confirming step. */
export async function enrolTotp(t: TestApp, account: { id: string; password: string }): Promise<{ secret: string; recoveryCodes: string[] }> {
  const owner = { accountId: account.id, sessionIdHash: sha256(await createSession(t.deps, account.id, 'full', 'enrolTotp helper')) };
  const started = await startEnrolment(t.deps, { ...owner, password: account.password, address: '127.0.0.1' });
  if (!started.ok) throw new Error(`enrolment did not start: ${started.reason}`);
  const confirmed = await confirmEnrolment(t.deps, { ...owner, code: totpCode(started.pending.secret, t.clock.now()) });
  if (!confirmed.ok) throw new Error(`enrolment not confirmed: ${confirmed.reason}`);
  await endSession(t.deps, owner.sessionIdHash);
  t.clock.advance(30_000);
  return { secret: started.pending.secret, recoveryCodes: confirmed.recoveryCodes };
}

/** A client that gave the password and now stands at the two-factor step. */
export async function atTotpStep(t: TestApp, account: { username: string; password: string }): Promise<TestClient> {
  const client = t.client();
  await client.get('/login');
  const res = await client.post('/login', { username: account.username, password: account.password });
  if (res.location !== '/login/totp') throw new Error(`expected the two-factor step, got ${res.status} ${res.location}`);
  await client.get('/login/totp');
  return client;
}

/** Signs in with password and the current code; the clock then moves to the next step so the next code is fresh. */
export async function signInWithTotp(t: TestApp, account: { username: string; password: string }, secret: string): Promise<TestClient> {
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
  if (res.location !== '/login/enrol') throw new Error(`expected the enrolment step, got ${res.status} ${res.location}`);
  await client.get('/login/enrol');
  return client;
}

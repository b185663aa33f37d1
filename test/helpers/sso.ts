// SSO test helpers: declare a provider row, and drive a whole round-trip (service -> test IdP -> callback).
import crypto from 'node:crypto';
import { newId, systemRandom } from '../../src/deps.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import type { TestApp, TestClient, TestResponse } from './app.ts';
import { CONFIDENTIAL_CLIENT_ID, CONFIDENTIAL_CLIENT_SECRET, PUBLIC_CLIENT_ID, type TestIdp } from './test-idp.ts';

/** The origin TestClient requests carry, hence the redirect_uri the service sends. */
export const TEST_ORIGIN = 'http://localhost';

/** The redirect URIs to register at the test IdP for these slugs (sign-in and link callbacks). */
export function redirectUrisFor(slugs: string[], origin = TEST_ORIGIN): string[] {
  return slugs.flatMap((s) => [`${origin}/login/sso/${s}/callback`, `${origin}/profile/sso/${s}/link/callback`]);
}

/** Binds (provider, sub) to an account directly, as a completed link would; the binding's id is `b-<sub>` unless given. */
export async function bindIdentity(
  t: TestApp,
  b: { providerId: string; sub: string; accountId: string; id?: string; label?: string },
): Promise<void> {
  await t.deps.db
    .insertInto('sso_identities')
    .values({
      id: b.id ?? `b-${b.sub}`,
      provider_id: b.providerId,
      sub: b.sub,
      account_id: b.accountId,
      label: b.label ?? b.sub,
      linked_at: 1,
    })
    .execute();
}

/** Inserts a provider pointing at the test IdP (public client unless `confidential`). */
export async function buildProvider(
  t: TestApp,
  idp: TestIdp,
  opts: {
    slug: string;
    createdBy: string;
    confidential?: boolean;
    enabled?: boolean;
    displayName?: string;
    issuer?: string;
  },
): Promise<{ id: string; slug: string }> {
  const id = newId(systemRandom);
  await t.deps.db
    .insertInto('sso_providers')
    .values({
      id,
      display_name: opts.displayName ?? `IdP ${opts.slug}`,
      slug: opts.slug,
      issuer: opts.issuer ?? idp.issuer,
      client_id: opts.confidential ? CONFIDENTIAL_CLIENT_ID : PUBLIC_CLIENT_ID,
      client_secret: opts.confidential ? CONFIDENTIAL_CLIENT_SECRET : null,
      enabled: opts.enabled === false ? 0 : 1,
      created_at: t.clock.now(),
      updated_at: t.clock.now(),
      created_by: opts.createdBy,
    })
    .execute();
  return { id, slug: opts.slug };
}

/** A unique subject at the IdP. */
export function newSub(): string {
  return `sub-${crypto.randomBytes(6).toString('hex')}`;
}

/** Path and query of an absolute URL, for TestClient. */
export function pathOf(url: URL | string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/**
 * Starts a flow at `startPath`, signs in at the IdP as `sub` (or cancels), and returns the callback URL without
 * following it, so tests can tamper with or replay it.
 */
export async function startAndAuthorize(
  client: TestClient,
  idp: TestIdp,
  startPath: string,
  sub: string,
  opts: { cancel?: boolean; keepSession?: boolean } = {},
): Promise<URL> {
  const start = await client.get(startPath);
  if (start.status !== 303 || !start.location)
    throw new Error(`start ${startPath} answered ${start.status}: ${start.text.slice(0, 300)}`);
  return idp.authorize(start.location, sub, opts);
}

/** The whole round-trip: start, IdP sign-in, callback. Returns the callback's response. */
export async function roundTrip(
  client: TestClient,
  idp: TestIdp,
  startPath: string,
  sub: string,
): Promise<TestResponse> {
  const callback = await startAndAuthorize(client, idp, startPath, sub);
  return client.get(pathOf(callback));
}

/**
 * Empties what SSO tests sharing one database leave behind: bindings, providers, sessions, accounts and start counts.
 */
export async function clearSsoState(db: Kysely<DB>): Promise<void> {
  // Every test's clock starts at the same instant, so one test's sign-in starts would count against the next's.
  await db.deleteFrom('auth_throttle').execute();
  await db.deleteFrom('sso_identities').execute();
  await db.deleteFrom('sso_providers').execute();
  await db.deleteFrom('sessions').execute();
  await db.deleteFrom('accounts').execute();
}

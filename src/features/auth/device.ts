// Device tokens: proof that a browser signed in to an account before, so a lock on the account's username (which
// anyone can trigger) does not keep its owner out. The token is signed by the HTTP layer with a key kept here.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { randomToken } from '../../deps.ts';

/** How long a device token counts after the sign-in that issued it (the cookie's Max-Age too). */
export const DEVICE_TTL_MS = 365 * 24 * 60 * 60_000;

/** Where the signing key lives: in the database, so every instance signs and verifies alike. */
const KEY_META = 'auth.device_cookie_key';

/**
 * A verified device token: the account it was issued to, that account's credentials version then, its random id, and
 * when.
 */
export interface DeviceToken {
  accountId: string;
  credentialsVersion: number;
  nonce: string;
  issuedAt: number;
}

const TOKEN_SHAPE = /^([A-Za-z0-9_-]{1,64})\.(\d{1,9})\.([A-Za-z0-9_-]{22,64})\.(\d{1,15})$/;

/**
 * A fresh token value for the account (sign it before it leaves the server). It carries the account's credentials
 * version, so a password change voids every device token issued before it.
 */
export function issueDeviceToken(deps: Deps, account: { id: string; credentials_version: number }): string {
  return `${account.id}.${account.credentials_version}.${randomToken(deps.random, 16)}.${deps.clock.now()}`;
}

/**
 * A fresh token for the account of a fully signed-in session, bound to the credentials version that session was
 * created under (not the account's current one); undefined when the session is gone or not full.
 */
export async function issueDeviceTokenForSession(deps: Deps, sessionIdHash: string): Promise<string | undefined> {
  const row = await deps.db
    .selectFrom('sessions')
    .select(['account_id', 'credentials_version'])
    .where('id_hash', '=', sessionIdHash)
    .where('stage', '=', 'full')
    .executeTakeFirst();
  return row ? issueDeviceToken(deps, { id: row.account_id, credentials_version: row.credentials_version }) : undefined;
}

/** Reads a token whose signature was already verified; undefined when malformed or older than DEVICE_TTL_MS. */
export function parseDeviceToken(value: string | undefined, now: number): DeviceToken | undefined {
  const m = value === undefined ? null : TOKEN_SHAPE.exec(value);
  if (!m) return undefined;
  const issuedAt = Number(m[4]);
  if (issuedAt > now || now - issuedAt >= DEVICE_TTL_MS) return undefined;
  return { accountId: m[1]!, credentialsVersion: Number(m[2]), nonce: m[3]!, issuedAt };
}

const keys = new WeakMap<Kysely<DB>, string>();

/** The device-token signing key if one was ever made, read once per process and cached; reads only. */
export async function deviceSigningKey(deps: Deps): Promise<string | undefined> {
  const cached = keys.get(deps.db);
  if (cached) return cached;
  const row = await deps.db.selectFrom('meta').select('value').where('key', '=', KEY_META).executeTakeFirst();
  if (row) keys.set(deps.db, row.value);
  return row?.value;
}

/** The signing key for issuing a token: the first call ever stores a random 32-byte key (first writer wins). */
export async function deviceIssuingKey(deps: Deps): Promise<string> {
  const existing = await deviceSigningKey(deps);
  if (existing) return existing;
  await deps.db
    .insertInto('meta')
    .values({ key: KEY_META, value: randomToken(deps.random, 32) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await deps.db.selectFrom('meta').select('value').where('key', '=', KEY_META).executeTakeFirstOrThrow();
  keys.set(deps.db, row.value);
  return row.value;
}

// Secrets revealed once after a redirect (POST/redirect/GET), and minting forms that mint once however often sent.
// A held secret is sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the session's cookie value, which
// the database never holds: a copy of the database taken before the secret is shown cannot read it.
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { sha256 } from '../../deps.ts';
import { putReveal, spendFormToken, takeReveal } from './reveals.repo.ts';

/** A held secret not shown within this long is dropped: the page after the redirect comes at once. */
const REVEAL_TTL_MS = 10 * 60 * 1000;

function sealKey(sessionCookie: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', sessionCookie, Buffer.alloc(0), 'svc session reveal v1', 32));
}

/** Seals `value` for this session: base64url of iv (12 bytes) | tag (16 bytes) | ciphertext. */
function seal(sessionCookie: string, kind: string, value: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', sealKey(sessionCookie), iv);
  cipher.setAAD(Buffer.from(kind, 'utf8'));
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Opens a sealed value; undefined when it does not verify under this session's key and kind. */
function open(sessionCookie: string, kind: string, sealed: string): string | undefined {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', sealKey(sessionCookie), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(kind, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Holds a freshly minted secret for the session named by `sessionCookie` until revealNow() shows it. */
export async function holdSecret(deps: Deps, sessionCookie: string, kind: string, value: string): Promise<void> {
  await putReveal(deps.db, {
    sessionIdHash: sha256(sessionCookie),
    kind,
    sealed: seal(sessionCookie, kind, value),
    now: deps.clock.now(),
  });
}

/** Takes the held secret of this kind (deleting it): its one showing. Undefined when none, or held too long. */
export async function takeSecret(deps: Deps, sessionCookie: string, kind: string): Promise<string | undefined> {
  const row = await takeReveal(deps.db, sha256(sessionCookie), kind);
  if (!row || deps.clock.now() - Number(row.created_at) > REVEAL_TTL_MS) return undefined;
  return open(sessionCookie, kind, row.sealed);
}

/** A fresh one-time token for a minting form (256 bits). */
export function newFormToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Spends a minting form's one-time token for this session; false when it is malformed or was spent already. */
export async function spendOnceToken(deps: Deps, sessionIdHash: string, token: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  return spendFormToken(deps.db, sessionIdHash, sha256(token), deps.clock.now());
}

// Password rules and argon2id hashing (OWASP parameters), off the event loop.
import { Algorithm, hash, verify } from '@node-rs/argon2';

/** Password length bounds, counted in Unicode code points (SPEC 8). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;
/** Username bound in code points (SPEC 8). */
export const USERNAME_MAX = 64;

const options = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Hashes a password with argon2id; the only form in which passwords are stored. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no stored hash it verifies against a dummy so unknown usernames cost the same time. */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    dummyHash ??= hash('not-a-real-password-for-timing', options);
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

/** Length of a string in Unicode code points, as the password and username rules count. */
export function codePoints(value: string): number {
  return [...value].length;
}

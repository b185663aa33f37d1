// Password rules and argon2id hashing (OWASP parameters), off the event loop.
import os from 'node:os';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/** Password length bounds, counted in Unicode code points (SPEC 8). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;
/** Username bound in code points (SPEC 8). */
export const USERNAME_MAX = 64;

const options = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Runs `task`s at most `limit` at a time, first come first served. Password hashing goes through one: each hash takes
 * tens of milliseconds of a core, so a flood of sign-ins (wrong passwords from ever new addresses) would otherwise take
 * every core and starve the event loop that serves everyone else's pages; instead the flood waits in line.
 */
export function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve)); // the finishing task hands its place over
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** All cores but one hash passwords at once (one on a two-core machine): the event loop keeps a core. */
const hashing = createLimiter(Math.max(1, os.availableParallelism() - 1));

/** Hashes a password with argon2id; the only form in which passwords are stored. */
export function hashPassword(password: string): Promise<string> {
  return hashing(() => hash(password, options));
}

let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no stored hash it verifies against a dummy so unknown usernames cost the same time. */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    dummyHash ??= hashPassword('not-a-real-password-for-timing');
    const dummy = await dummyHash;
    await hashing(() => verify(dummy, password)).catch(() => false);
    return false;
  }
  return hashing(() => verify(stored, password)).catch(() => false);
}

/** Length of a string in Unicode code points, as the password and username rules count. */
export function codePoints(value: string): number {
  return [...value].length;
}

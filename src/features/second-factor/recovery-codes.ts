// Recovery codes: generation, the typed format, and how they are hashed and checked.
//
// Format: 15 characters of Crockford base32 in three groups, e.g. "7k2qd-m9xwa-4hj0c": 75 random bits per code,
// lower case, no i/l/o/u; typing is forgiving (case, spaces and hyphens ignored; i/l read as 1, o as 0).
//
// Storage: "hmac-sha256$<salt>$<digest>" with a fresh 128-bit salt per code. A fast salted hash is enough here
// because the input is a 75-bit random value, not a human-chosen secret: an offline search of 2^75 SHA-256
// computations per code is out of reach, so argon2's memory-hardness buys nothing, while argon2 over up to ten
// rows per attempt would cost ~300 ms of CPU and hand an attacker a cheap denial of service. The salt keeps equal
// codes from sharing a hash and forces any search to target one row at a time.
import crypto from 'node:crypto';
import type { Random } from '../../deps.ts';
import { safeEqual } from '../../deps.ts';

/** Codes issued per set. */
export const RECOVERY_CODE_COUNT = 10;
/** Characters per code (5 bits each: 75 bits). */
const CODE_CHARS = 15;
const GROUP = 5;
/** Crockford's base32 alphabet: no i, l, o, u, so codes read aloud and type without ambiguity. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const SCHEME = 'hmac-sha256';

/** A fresh code in display form (groups of five joined by hyphens). */
export function newRecoveryCode(random: Random): string {
  const bytes = random.bytes(CODE_CHARS);
  // 32 divides 256, so the low five bits of each byte are uniform: no modulo bias.
  return displayForm([...bytes].map((b) => ALPHABET[b & 31]!).join(''));
}

/** A canonical code in display form: groups of five joined by hyphens. */
function displayForm(canonical: string): string {
  return canonical.match(new RegExp(`.{${GROUP}}`, 'g'))!.join('-');
}

/** The canonical form of a typed code (15 alphabet characters), or undefined when it cannot be one. */
export function normaliseRecoveryCode(input: string): string | undefined {
  const compact = input
    .toLowerCase()
    .replace(/[\s-]+/g, '')
    .replace(/[il]/g, '1')
    .replace(/o/g, '0');
  if (compact.length !== CODE_CHARS || [...compact].some((ch) => !ALPHABET.includes(ch))) return undefined;
  return compact;
}

/** Salted hash of a code in canonical form, as stored. */
export function hashRecoveryCode(random: Random, canonical: string): string {
  const salt = random.bytes(16).toString('base64url');
  return `${SCHEME}$${salt}$${digest(salt, canonical)}`;
}

/** Whether a canonical code matches a stored hash (constant-time comparison). */
export function recoveryCodeMatches(stored: string, canonical: string): boolean {
  const [scheme, salt, expected] = stored.split('$');
  if (scheme !== SCHEME || !salt || !expected) return false;
  return safeEqual(digest(salt, canonical), expected);
}

function digest(salt: string, canonical: string): string {
  return crypto.createHmac('sha256', salt).update(canonical, 'utf8').digest('hex');
}

/**
 * Codes posted back by the page that showed them (its "Download as text file" form), in display form, or undefined
 * unless they are 1 to RECOVERY_CODE_COUNT well-formed codes. Nothing here is looked up: the file holds what the page
 * held.
 */
export function shownRecoveryCodes(values: string[]): string[] | undefined {
  if (values.length === 0 || values.length > RECOVERY_CODE_COUNT) return undefined;
  const canonical = values.map((v) => normaliseRecoveryCode(v));
  if (canonical.some((c) => c === undefined)) return undefined;
  return canonical.map((c) => displayForm(c!));
}

/** The downloadable text file of a set of codes, one numbered code per line. */
export function recoveryCodesText(codes: string[], username: string, at: number): string {
  const lines = [
    `svc recovery codes for ${username}`,
    `Saved ${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC. Each code signs in once, in place of a code from your authenticator app.`,
    'Generating a new set voids these. Keep this file somewhere safe.',
    '',
    ...codes.map((code, i) => `${String(i + 1).padStart(2, ' ')}. ${code}`),
    '',
  ];
  return lines.join('\n');
}

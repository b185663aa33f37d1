// The username and password rules shared by setup, invitation acceptance and password change.
import { z } from 'zod';
import { isMixedScript } from './lookalike.ts';
import { codePoints, PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX } from './passwords.ts';

/**
 * Trimmed, 1 to 64 code points, no control characters, letters of one script (a look-alike of another name is refused
 * at insert).
 */
export const usernameField = z
  .string({ error: 'Enter a username.' })
  .transform((v) => v.trim().normalize('NFC'))
  .refine((v) => v.length > 0, 'Enter a username.')
  .refine((v) => codePoints(v) <= USERNAME_MAX, `Usernames are at most ${USERNAME_MAX} characters.`)
  .refine((v) => !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(v), 'Usernames cannot contain control or invisible characters.')
  // Too long is already refused: skip the per-character script check on an oversized value.
  .refine(
    (v) => codePoints(v) > USERNAME_MAX || !isMixedScript(v),
    'Usernames cannot mix letters of different scripts (such as Latin and Cyrillic).',
  );

/** 8 to 72 code points, taken as typed (no trimming). */
export const passwordField = z
  .string({ error: 'Enter a password.' })
  .refine((v) => codePoints(v) >= PASSWORD_MIN, `Passwords are at least ${PASSWORD_MIN} characters.`)
  .refine((v) => codePoints(v) <= PASSWORD_MAX, `Passwords are at most ${PASSWORD_MAX} characters.`);

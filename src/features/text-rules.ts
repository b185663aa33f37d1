// One rule for names and labels people type or providers send: nothing that renders invisibly or breaks a line.

/** Control (Cc) and format (Cf: bidi overrides, zero-width) characters, and line or paragraph separators. */
export const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** True when `value` holds a character that would render invisibly or move text around (see INVISIBLE). */
export function hasInvisibleCharacters(value: string): boolean {
  return INVISIBLE.test(value);
}

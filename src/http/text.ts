// One rule for text from the outside: no control characters, and ids from their own alphabet.

/** Row ids as the app makes them; anything else is treated as an unknown id before the database sees it. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000A-\u001F\u007F]/;

/** True when `value` holds a C0 control or DEL; tab is always allowed, CR and LF only with `newlines: true`. */
export function hasControlCharacters(value: string, options?: { newlines?: boolean }): boolean {
  return (options?.newlines ? CONTROL : CONTROL_OR_NEWLINE).test(value);
}

/** True when `value` is a well-formed row id (see ID_PATTERN). */
export function isId(value: string | null | undefined): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

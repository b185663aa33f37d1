// Recognises constraint violations on both dialects, so domain code can turn them into typed refusals.

function code(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/** A unique or primary-key constraint refused the write. */
export function isUniqueViolation(err: unknown): boolean {
  const c = code(err);
  return c === '23505' || c === 'SQLITE_CONSTRAINT_UNIQUE' || c === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A foreign-key constraint refused the write (for example removing an author of rows). */
export function isForeignKeyViolation(err: unknown): boolean {
  const c = code(err);
  return c === '23503' || c === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

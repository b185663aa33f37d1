// Validates the parsed form against a zod schema; errors come back per field, for rendering beside it.
import type { z } from 'zod';
import type { Ctx } from './env.ts';

/** Longest value any single form field may carry; longer is refused before validation. */
const FIELD_MAX = 4096;

export type FormResult<T> = { ok: true; data: T } | { ok: false; errors: Record<string, string>; values: Record<string, string> };

/** Reads the request's form (fields in `multi` as arrays) and validates it. */
export function parseForm<S extends z.ZodType>(c: Ctx, schema: S, multi: string[] = []): FormResult<z.output<S>> {
  const form = c.get('form') ?? new URLSearchParams();
  const raw: Record<string, string | string[]> = {};
  const values: Record<string, string> = {};
  const errors: Record<string, string> = {};
  for (const key of new Set(form.keys())) {
    if (key === '_csrf') continue;
    const all = form.getAll(key);
    if (all.some((v) => v.length > FIELD_MAX)) errors[key] = 'This value is too long.';
    raw[key] = multi.includes(key) ? all : all[0]!;
    values[key] = all[0]!;
  }
  for (const key of multi) raw[key] ??= [];
  if (Object.keys(errors).length > 0) return { ok: false, errors, values };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, data: parsed.data };
  for (const issue of parsed.error.issues) {
    const key = String(issue.path[0] ?? '_form');
    errors[key] ??= issue.message;
  }
  return { ok: false, errors, values };
}

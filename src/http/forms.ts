// Validates the parsed form against a zod schema; errors come back per field, for rendering beside it.
import { z } from 'zod';
import type { Ctx } from './env.ts';
import { hasControlCharacters, ID_PATTERN } from './text.ts';

/** Longest value any single form field may carry; longer is refused before validation. */
const FIELD_MAX = 4096;

/** The field message for a value holding NUL or another control character (refused before validation). */
export const CONTROL_CHARACTERS_MESSAGE = 'This value cannot contain control characters.';

/**
 * A refusal says whether it was for control characters (`control`), which a no-op form answers with 400 all the same.
 */
export type FormResult<T> =
  | { ok: true; data: T }
  | { ok: false; errors: Record<string, string>; values: Record<string, string>; control: boolean };

/** Which fields arrive as arrays (`multi`) and which may hold line breaks (`newlines`; tab is always allowed). */
export interface FormOptions {
  multi?: string[];
  newlines?: string[];
}

/** A row id from a form: the app's id alphabet only, so a malformed one never reaches the database. */
export function idField(message: string) {
  return z.string({ error: message }).regex(ID_PATTERN, message);
}

/** Reads the request's form and validates it; a value with control characters is refused for every schema alike. */
export function parseForm<S extends z.ZodType>(c: Ctx, schema: S, options: FormOptions = {}): FormResult<z.output<S>> {
  const multi = options.multi ?? [];
  const form = c.get('form') ?? new URLSearchParams();
  const raw: Record<string, string | string[]> = {};
  const values: Record<string, string> = {};
  const errors: Record<string, string> = {};
  let refusedControl = false;
  for (const key of new Set(form.keys())) {
    // A field name no schema could declare (a stray control character in it) is dropped, not echoed.
    if (key === '_csrf' || hasControlCharacters(key)) continue;
    const all = form.getAll(key);
    const newlines = options.newlines?.includes(key) ?? false;
    const control = all.some((v) => hasControlCharacters(v, { newlines }));
    if (all.some((v) => v.length > FIELD_MAX)) errors[key] = 'This value is too long.';
    else if (control) errors[key] = CONTROL_CHARACTERS_MESSAGE;
    refusedControl ||= control;
    raw[key] = multi.includes(key) ? all : all[0]!;
    // A refused value is not shown again: the page would echo the control characters back.
    values[key] = control ? '' : all[0]!;
  }
  for (const key of multi) raw[key] ??= [];
  if (Object.keys(errors).length > 0) return { ok: false, errors, values, control: refusedControl };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, data: parsed.data };
  for (const issue of parsed.error.issues) {
    const key = String(issue.path[0] ?? '_form');
    errors[key] ??= issue.message;
  }
  return { ok: false, errors, values, control: false };
}

// Precompiled markup for the pages every request renders. Rendering JSX costs more than the rest of such a page
// (and each render runs inside an AsyncLocalStorage scope), yet their markup only changes in a few values. So the
// JSX component stays the one source of the markup: it is rendered once per shape with a marker in place of each
// value, split into fixed chunks, and a page is those chunks joined with the escaped values. Tests compare the two.
import { escapeToBuffer } from 'hono/utils/html';

const SLOT = '\u0001';

/** The marker standing for slot `name` while a shape is rendered through JSX. */
export function slot(name: string): string {
  return `${SLOT}${name}${SLOT}`;
}

/** A shape split at its markers: chunks[0], value of slots[0], chunks[1], ... */
export interface Template<S extends string> {
  chunks: string[];
  slots: S[];
}

/**
 * Splits `html` (rendered with slot markers) into its fixed chunks. Every value must come through the JSX untouched,
 * exactly where expected (`expected` lists each slot as often as it appears); anything else is a bug in the caller.
 */
export function compileTemplate<S extends string>(html: string, expected: readonly S[]): Template<S> {
  const parts = html.split(SLOT);
  const chunks: string[] = [];
  const slots: S[] = [];
  parts.forEach((part, i) => (i % 2 === 0 ? chunks.push(part) : slots.push(part as S)));
  if (parts.length % 2 === 0 || [...slots].sort().join() !== [...expected].sort().join()) {
    throw new Error(`template markers came out as ${slots.join()}, expected ${expected.join()}`);
  }
  return { chunks, slots };
}

/** Joins the template's chunks with the values, which are HTML already (escape text with escapeHtml). */
export function fillTemplate<S extends string>(template: Template<S>, values: Record<S, string>): string {
  let html = template.chunks[0]!;
  for (let i = 0; i < template.slots.length; i++) html += values[template.slots[i]!] + template.chunks[i + 1]!;
  return html;
}

/** Escapes text for HTML content or a quoted attribute, exactly as JSX does. */
export function escapeHtml(value: string): string {
  const buffer: [string] = [''];
  escapeToBuffer(value, buffer);
  return buffer[0];
}

// The one spelling of a message's instant that every door takes (`svc emit --instant`, POST /api/messages' `instant`):
// an ISO-8601 / RFC 3339 time with an explicit zone. Each door words the refusal in its own form; the rule lives here.

/** How a refusal describes the accepted spelling ("not a valid …"). */
export const INSTANT_SPELLING = 'ISO-8601 time with a zone, such as 2026-01-15T12:00:00Z';

// Date, "T", hours and minutes, optional seconds with up to nine fraction digits, and a zone ("Z" or ±hh:mm). RFC 3339
// allows "t" and "z" in lower case; nothing around the time (no spaces).
const SPELLING = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Epoch milliseconds of `text`, or undefined when it is not such a time or names one that does not exist (2026-02-30,
 * 24:00, 12:00:60, an offset beyond ±23:59). Fractions beyond milliseconds are dropped.
 */
export function parseInstant(text: string): number | undefined {
  const m = SPELLING.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return undefined;
  const zone = m[8]!.toUpperCase();
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4, 6)) > 59)) return undefined;
  const ms = Date.parse(
    `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}.${(m[7] ?? '0').padEnd(3, '0').slice(0, 3)}${zone}`,
  );
  return Number.isNaN(ms) ? undefined : ms;
}

// The process's logger: pino, writing JSON lines for a log collector, or one plain line per event for a person at a
// terminal. Both formats print the same object: the plain line is made from the JSON line pino wrote, so whatever is
// left out or redacted before logging (tokens in URLs, secrets never passed to the logger) is the same in both.
import pino, { type DestinationStream, type Logger } from 'pino';

/** How log lines are written: one JSON object per line (for collectors) or one plain line per event (for people). */
export type LogFormat = 'json' | 'plain';

/**
 * SVC_LOG_FORMAT when set; otherwise plain lines on a terminal and JSON lines anywhere else (a file, a pipe, a
 * collector).
 */
export function chooseLogFormat(configured: LogFormat | undefined, isTerminal: boolean): LogFormat {
  return configured ?? (isTerminal ? 'plain' : 'json');
}

/**
 * A logger at `level` writing to file descriptor `fd` (1 stdout, 2 stderr) in `format`, or to `destination` (tests).
 * No worker thread or transport: plain lines are formatted in the writing thread.
 */
export function createLogger(options: {
  level: string;
  format: LogFormat;
  fd?: 1 | 2;
  destination?: DestinationStream;
}): Logger {
  const destination = options.destination ?? pino.destination(options.fd ?? 1);
  const stream = options.format === 'plain' ? plainLines(destination) : destination;
  return pino({ level: options.level, base: undefined }, stream);
}

/** A stream that turns each JSON line pino writes into a plain line before passing it on. */
function plainLines(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(formatPlainLine(line)) };
}

const LEVEL_LABELS: Record<number, string> = pino.levels.labels;

/**
 * One JSON log line as a plain one: time (UTC), level, message, then the other fields as key=value (nested objects
 * flattened as `err.message=...`). A value is quoted (JSON string escapes) when it is empty or holds a space, a quote,
 * a backslash or a control character; nothing else is, so a URL stays whole and copyable. A text field whose value the
 * message already shows as a whole word (the setup link) is not repeated, leaving that value the last thing on its
 * line. Control characters in the message are escaped, so every event stays one line.
 */
export function formatPlainLine(jsonLine: string): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  const { time, level, msg, ...fields } = event;
  const when = typeof time === 'number' ? new Date(time).toISOString() : String(time ?? '');
  const label = (
    typeof level === 'number' ? (LEVEL_LABELS[level] ?? String(level)) : String(level ?? '')
  ).toUpperCase();
  const message = escapeControls(typeof msg === 'string' ? msg : msg === undefined ? '' : JSON.stringify(msg));
  const words = new Set(message.split(/\s+/));
  const pairs: string[] = [];
  for (const [key, value] of flatten(fields, '')) {
    if (typeof value === 'string' && value !== '' && words.has(value)) continue;
    pairs.push(`${key}=${formatValue(value)}`);
  }
  return `${[when, label.padEnd(5), message, ...pairs].filter((part) => part !== '').join(' ')}\n`;
}

/** Nested objects as dotted keys; arrays and primitives as they are. */
function* flatten(fields: Record<string, unknown>, prefix: string): Generator<[string, unknown]> {
  for (const [key, value] of Object.entries(fields)) {
    const name = prefix + key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      yield* flatten(value as Record<string, unknown>, `${name}.`);
    else yield [name, value];
  }
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return quoteIfNeeded(value);
  if (Array.isArray(value)) {
    const simple = value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
    return quoteIfNeeded(simple ? value.map(String).join(',') : JSON.stringify(value));
  }
  return quoteIfNeeded(String(value));
}

function quoteIfNeeded(text: string): string {
  return text === '' || /[\s"\\\p{Cc}]/u.test(text) ? JSON.stringify(text) : text;
}

function escapeControls(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => JSON.stringify(c).slice(1, -1));
}

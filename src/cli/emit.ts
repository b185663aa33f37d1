// svc emit: puts one message into the store through emit(), from flags. How operators and tests put messages in.
import { parseArgs } from 'node:util';
import type { Deps } from '../deps.ts';
import { CLI_ACTOR, type AdminActor } from '../features/auth/admin-actor.ts';
import { EMIT_REFUSALS } from '../features/messages/emit.refusals.ts';
import { emit, validateEmitInput, type EmitField, type EmitInput } from '../features/messages/emit.service.ts';
import { wordsOf } from '../features/refusals.ts';
import { CAUSES } from '../features/messages/classes.ts';
import { INSTANT_SPELLING, parseInstant } from '../features/messages/instant.ts';
import { startRuntime } from './start.ts';

export const EMIT_HELP = `Usage: svc emit --cause <cause> --subject-kind <kind> --subject-key <key> --headline <text> [options]

Stores one message (and queues it for every enabled channel of its class); prints the message id.

  --cause <cause>          one of ${CAUSES.join(', ')}
  --subject-kind <kind>    bare kind of the subject the message fired at, e.g. service
  --subject-key <key>      bare key of that subject (the key, not a label)
  --headline <text>        the rendered sentence, stored and sent byte for byte
  --instant <time>         time of the cause, ISO-8601 with a zone, e.g. 2026-01-15T12:00:00Z (default: now)
  --census <n>             a count, where the firing has one (whole number, 0 or more)
  --source <id>            the Source a declared-input message links to (required for that cause)
  --seed <id>              the Seed an aperture message links to (required for that cause)
`;

const FLAG_OF: Record<EmitField, string> = {
  cause: '--cause',
  subjectKind: '--subject-kind',
  subjectKey: '--subject-key',
  instant: '--instant',
  headline: '--headline',
  census: '--census',
  sourceId: '--source',
  seedId: '--seed',
};

const STRING_FLAGS = new Set([
  'cause',
  'subject-kind',
  'subject-key',
  'headline',
  'instant',
  'census',
  'source',
  'seed',
]);

// "--flag value" becomes "--flag=value", so a value may start with a dash (a headline such as "-3 services").
function joinValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('--') && STRING_FLAGS.has(arg.slice(2)) && i + 1 < args.length) out.push(`${arg}=${args[++i]}`);
    else out.push(arg);
  }
  return out;
}

export type ParsedEmitArgs = { ok: true; input: EmitInput } | { ok: false; errors: string[] };

/** Turns flags into an emit() input; every problem is reported, each naming its flag. */
export function parseEmitArgs(args: string[], now: number): ParsedEmitArgs {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: joinValues(args),
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries([...STRING_FLAGS].map((f) => [f, { type: 'string' as const }])),
    }).values as Record<string, string | undefined>;
  } catch (err) {
    return { ok: false, errors: [err instanceof Error ? err.message : String(err)] };
  }
  const errors: string[] = [];
  for (const flag of ['cause', 'subject-kind', 'subject-key', 'headline']) {
    if (values[flag] === undefined) errors.push(`--${flag} is required.`);
  }
  let instant = now;
  if (values.instant !== undefined) {
    const parsed = parseInstant(values.instant);
    if (parsed === undefined) errors.push(`--instant: not a valid ${INSTANT_SPELLING}.`);
    else instant = parsed;
  }
  let census: number | undefined;
  if (values.census !== undefined) {
    if (/^\d{1,15}$/.test(values.census.trim())) census = Number(values.census.trim());
    else errors.push('--census: the census must be a whole number of zero or more.');
  }
  const input: EmitInput = {
    cause: values.cause ?? '',
    subject: { kind: values['subject-kind'] ?? '', key: values['subject-key'] ?? '' },
    instant,
    headline: values.headline ?? '',
    census,
    sourceId: values.source,
    seedId: values.seed,
  };
  const problems = validateEmitInput(input);
  for (const [field, message] of Object.entries(problems) as [EmitField, string][]) {
    const flag = FLAG_OF[field];
    const already = errors.some((e) => e.startsWith(`${flag} `) || e.startsWith(`${flag}:`));
    if (!already) errors.push(`${flag}: ${message}`);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, input };
}

/** Runs `svc emit`: validates flags before touching the database, stores the message, prints its id. */
export async function runEmit(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(EMIT_HELP);
    return 0;
  }
  const parsed = parseEmitArgs(args, Date.now());
  if (!parsed.ok) {
    process.stderr.write(
      `svc emit: nothing stored:\n${parsed.errors.map((e) => `  - ${e}`).join('\n')}\n\n${EMIT_HELP}`,
    );
    return 2;
  }
  // Logs go to stderr so stdout carries only the message id.
  const deps = await startRuntime({ logToStderr: true });
  try {
    return await emitAndReport(deps, CLI_ACTOR, parsed.input, process);
  } finally {
    await deps.db.destroy();
  }
}

/** Where `svc emit` writes: the message id to stdout, everything else to stderr. */
export interface EmitOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Emits `input` as `actor` and says the outcome: the id on stdout and a summary on stderr (exit 0), or each problem on
 * stderr (exit 2 for invalid input, 1 for a refused actor, in the words every door uses). The command line runs it as
 * the host (always an administrator).
 */
export async function emitAndReport(deps: Deps, actor: AdminActor, input: EmitInput, out: EmitOutput): Promise<number> {
  const result = await emit(deps, actor, input);
  if (!result.ok && result.reason === 'not-admin') {
    out.stderr.write(`svc emit: nothing stored: ${wordsOf(EMIT_REFUSALS['not-admin'], undefined)}\n`);
    return 1;
  }
  if (!result.ok) {
    out.stderr.write(
      `svc emit: nothing stored:\n${Object.values(result.errors)
        .map((e) => `  - ${e}`)
        .join('\n')}\n`,
    );
    return 2;
  }
  out.stdout.write(`${result.id}\n`);
  out.stderr.write(
    `svc emit: stored ${result.class} message; ${result.deliveries} channel ${result.deliveries === 1 ? 'delivery' : 'deliveries'} queued\n`,
  );
  return 0;
}

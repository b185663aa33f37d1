// emit(): the one way a message enters the store. Validates a fully computed message, maps its cause to a
// class, builds its link, serializes the channel body once, and stores it with its pending deliveries in one
// transaction (a transactional outbox: the workers deliver what the transaction committed). Its stages
// (prepareEmit, storeMessage, runEmitTransaction) let a caller write more in that same transaction, as
// POST /api/messages does with its Idempotency-Key.
import type { Transaction } from 'kysely';
import { isForeignKeyViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import { notifyDeliveriesDue } from './deliveries-due.ts';
import { CAUSES, CLASS_OF_CAUSE, isCause, type Cause, type MessageClass } from './classes.ts';
import { insertDeliveriesForClass, insertMessage, type MessageRow } from './messages.repo.ts';

/** A fully computed message, as the code that noticed the cause hands it over. */
export interface EmitInput {
  cause: string;
  /** The bare kind and key of the thing the message fired at (the key, not a rendered label). */
  subject: { kind: string; key: string };
  /** Time of the cause (epoch milliseconds), not of emission or delivery. */
  instant: number;
  /** The rendered sentence, stored and sent byte for byte. */
  headline: string;
  /** A count where the firing has one; never the rows behind it. */
  census?: number | null;
  /** The Source a `declared-input` message links to (required for that cause only). */
  sourceId?: string;
  /** The Seed an `aperture` message links to (required for that cause only). */
  seedId?: string;
}

/** Which input field a refusal is about. */
export type EmitField =
  | 'cause'
  | 'subjectKind'
  | 'subjectKey'
  | 'instant'
  | 'headline'
  | 'census'
  | 'sourceId'
  | 'seedId';

export type EmitResult =
  | { ok: true; id: string; class: MessageClass; deliveries: number; message: MessageRow }
  | { ok: false; reason: 'invalid'; errors: Partial<Record<EmitField, string>> }
  | { ok: false; reason: 'not-admin' };

/** Longest accepted values: generous for real content, small enough to keep the store and bodies bounded. */
export const EMIT_LIMITS = { kind: 64, key: 512, headline: 1000, id: 256 } as const;

/** Latest instant whose ISO-8601 form is still the plain four-digit-year form. */
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

// Control characters (C0, DEL, C1) and lone UTF-16 surrogates have no place in a one-line label or key.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /\p{Cs}/u;

function checkText(value: unknown, what: string, max: number): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return `${what} is required and may not be blank.`;
  if ([...value].length > max) return `${what} may be at most ${max} characters.`;
  if (CONTROL.test(value)) return `${what} may not contain control characters such as line breaks or tabs.`;
  if (LONE_SURROGATE.test(value)) return `${what} is not valid Unicode text.`;
  return undefined;
}

// A link path segment of "." or ".." (in any spelling) would be resolved away by every URL parser.
function checkSegment(value: unknown, what: string, max: number): string | undefined {
  const problem = checkText(value, what, max);
  if (problem) return problem;
  if (value === '.' || value === '..') return `${what} may not be "." or "..".`;
  return undefined;
}

/** Validates every field at once, so the caller can report all problems together. */
export function validateEmitInput(input: EmitInput): Partial<Record<EmitField, string>> {
  const errors: Partial<Record<EmitField, string>> = {};
  const set = (field: EmitField, problem: string | undefined) => {
    if (problem) errors[field] = problem;
  };
  if (!isCause(input.cause)) errors.cause = `The cause must be one of ${CAUSES.join(', ')}.`;
  set('subjectKind', checkSegment(input.subject?.kind, 'The subject kind', EMIT_LIMITS.kind));
  set('subjectKey', checkSegment(input.subject?.key, 'The subject key', EMIT_LIMITS.key));
  if (
    typeof input.instant !== 'number' ||
    !Number.isInteger(input.instant) ||
    input.instant < 0 ||
    input.instant > MAX_INSTANT
  ) {
    errors.instant = 'The instant must be a valid time between 1970 and 9999.';
  }
  set('headline', checkText(input.headline, 'The headline', EMIT_LIMITS.headline));
  if (
    input.census !== undefined &&
    input.census !== null &&
    !(Number.isSafeInteger(input.census) && input.census >= 0)
  ) {
    errors.census = 'The census must be a whole number of zero or more.';
  }
  const needsSource = input.cause === 'declared-input';
  const needsSeed = input.cause === 'aperture';
  if (needsSource)
    set(
      'sourceId',
      checkSegment(input.sourceId, 'The Source id (what a declared-input message links to)', EMIT_LIMITS.id),
    );
  else if (input.sourceId !== undefined) errors.sourceId = 'A Source id is only given for the declared-input cause.';
  if (needsSeed)
    set('seedId', checkSegment(input.seedId, 'The Seed id (what an aperture message links to)', EMIT_LIMITS.id));
  else if (input.seedId !== undefined) errors.seedId = 'A Seed id is only given for the aperture cause.';
  return errors;
}

/** Where a message points inside this instance, relative to SVC_PUBLIC_URL. */
export type LinkTarget =
  | { cause: 'drift' | 'threshold'; subject: { kind: string; key: string } }
  | { cause: 'declared-input'; sourceId: string }
  | { cause: 'aperture'; seedId: string };

/** The absolute link of a message, or undefined when no public URL is configured. Path segments are URL-encoded. */
export function messageLink(publicUrl: string | undefined, target: LinkTarget): string | undefined {
  if (!publicUrl) return undefined;
  const base = publicUrl.replace(/\/+$/, '');
  const seg = encodeURIComponent;
  switch (target.cause) {
    case 'drift':
    case 'threshold':
      return `${base}/subjects/${seg(target.subject.kind)}/${seg(target.subject.key)}`;
    case 'declared-input':
      return `${base}/sources/${seg(target.sourceId)}`;
    case 'aperture':
      return `${base}/seeds/${seg(target.seedId)}`;
  }
}

/** The channel body (docs/delivery.md, "The request"), serialized once; census and link are left out when absent. */
export function serializeBody(m: {
  id: string;
  class: MessageClass;
  cause: Cause;
  subject: { kind: string; key: string };
  instant: number;
  headline: string;
  census: number | null;
  link: string | undefined;
}): string {
  return JSON.stringify({
    message: m.id,
    class: m.class,
    cause: m.cause,
    subject: { kind: m.subject.kind, key: m.subject.key },
    instant: new Date(m.instant).toISOString(),
    headline: m.headline,
    ...(m.census === null ? {} : { census: m.census }),
    ...(m.link === undefined ? {} : { link: m.link }),
  });
}

function linkTarget(cause: Cause, input: EmitInput): LinkTarget {
  if (cause === 'declared-input') return { cause, sourceId: input.sourceId! };
  if (cause === 'aperture') return { cause, seedId: input.seedId! };
  return { cause, subject: input.subject };
}

/** A message ready to store: validated, classed, linked and its channel body serialized, before any transaction. */
export type PreparedEmit =
  | { ok: true; message: MessageRow }
  | { ok: false; reason: 'invalid'; errors: Partial<Record<EmitField, string>> };

/** Everything emit() computes before touching the database; invalid input is refused with every problem named. */
export function prepareEmit(deps: Deps, input: EmitInput): PreparedEmit {
  const errors = validateEmitInput(input);
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };
  const cause = input.cause as Cause;
  const cls = CLASS_OF_CAUSE[cause];
  const id = newId(deps.random);
  const census = input.census ?? null;
  const link = messageLink(deps.config.publicUrl, linkTarget(cause, input));
  const subject = { kind: input.subject.kind, key: input.subject.key };
  const body = serializeBody({
    id,
    class: cls,
    cause,
    subject,
    instant: input.instant,
    headline: input.headline,
    census,
    link,
  });
  const message: MessageRow = {
    id,
    class: cls,
    cause,
    subject_kind: subject.kind,
    subject_key: subject.key,
    instant: input.instant,
    headline: input.headline,
    census,
    link: link ?? null,
    body,
    created_at: deps.clock.now(),
  };
  return { ok: true, message };
}

/**
 * Stores a prepared message and one pending delivery per enabled channel subscribed to its class inside `trx`, with
 * the NOTIFY that commits with them (waking every other process's workers). Returns how many deliveries were queued;
 * the caller wakes this process's workers after the commit (runEmitTransaction does).
 */
export async function storeMessage(trx: Transaction<DB>, deps: Deps, message: MessageRow): Promise<number> {
  await insertMessage(trx, message);
  const deliveries = await insertDeliveriesForClass(trx, {
    messageId: message.id,
    class: message.class,
    now: message.created_at,
  });
  if (deliveries > 0) await notifyDeliveriesDue(trx, deps.dialect);
  return deliveries;
}

/**
 * Runs `work` (which stores messages with storeMessage, and may write more in the same transaction) in one transaction
 * and, after the commit, wakes this process's workers when it queued deliveries. On PostgreSQL a channel deleted while
 * the transaction runs fails the deliveries' foreign key; the whole transaction rolled back, so running it again (the
 * channel now gone) is safe.
 */
export async function runEmitTransaction<T>(
  deps: Deps,
  work: (trx: Transaction<DB>) => Promise<{ value: T; deliveries: number }>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { value, deliveries } = await deps.db.transaction().execute(work);
      // After the commit, so a woken worker finds the rows.
      if (deliveries > 0) deps.wakeup.wake();
      return value;
    } catch (err) {
      if (!isForeignKeyViolation(err) || attempt >= 3) throw err;
    }
  }
}

/**
 * Stores one message and one pending delivery per enabled channel subscribed to its class, in one
 * transaction, then wakes the workers (this process's at once, every process's through NOTIFY on PostgreSQL).
 * Emitting is an administrator's act: an `actor` that is not an active administrator is refused, as is invalid input
 * (with every problem named); a refusal stores nothing.
 */
export async function emit(deps: Deps, actor: AdminActor, input: EmitInput): Promise<EmitResult> {
  if (!(await actorIsAdmin(deps, actor))) return { ok: false, reason: 'not-admin' };
  const prepared = prepareEmit(deps, input);
  if (!prepared.ok) return prepared;
  const { message } = prepared;
  const deliveries = await runEmitTransaction(deps, async (trx) => {
    const queued = await storeMessage(trx, deps, message);
    return { value: queued, deliveries: queued };
  });
  return { ok: true, id: message.id, class: message.class, deliveries, message };
}

// The shapes of the messages API (requests validated, answers documented, both from these schemas) and the functions
// that present domain rows in them. Admin-only fields are optional in the schemas and left out of viewers' answers.
import { z } from '@hono/zod-openapi';
import { iso, PageQuery, Timestamp } from '../../http/api.ts';
import type { MessageDeliveriesView } from '../delivery/deliveries-view.service.ts';
import { CAUSES, CLASSES } from '../messages/classes.ts';
import { EMIT_LIMITS, type EmitField } from '../messages/emit.service.ts';
import { INSTANT_SPELLING, parseInstant } from '../messages/instant.ts';
import type { EmitRequest } from '../messages/idempotency.service.ts';
import type { InboxItem, MessageDetail as MessageDetailView } from './inbox.service.ts';
import type { MessageRow } from '../messages/messages.repo.ts';
import { MARK_READ_MAX } from '../messages/read-state.service.ts';

/** The alphabet of message ids (random url-safe strings). */
const MESSAGE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `{id}` in a message's path; anything outside the id alphabet answers 404. */
export const MessageIdParam = z.object({
  id: z
    .string()
    .regex(MESSAGE_ID)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

const Subject = z
  .strictObject({ kind: z.string(), key: z.string().openapi({ description: 'The bare key, not a rendered label.' }) })
  .openapi('MessageSubject');

/** The fields every presentation of a message shares. */
const MessageFields = z.strictObject({
  id: z.string(),
  class: z.enum(CLASSES).openapi({ description: 'The routing class channels subscribe on.' }),
  cause: z.enum(CAUSES),
  subject: Subject,
  instant: Timestamp.openapi({ description: 'When the cause happened.' }),
  headline: z.string(),
  census: z.number().int().nullable().openapi({ description: 'A count where the firing has one.' }),
  link: z
    .string()
    .nullable()
    .openapi({ description: 'Where the message points in the console; null when SVC_PUBLIC_URL is not set.' }),
  created_at: Timestamp.openapi({ description: 'When the message was stored; lists are ordered by it.' }),
});

/** One message in a list. */
export const Message = MessageFields.extend({
  read: z.boolean().openapi({ description: "Whether the token's account has read it." }),
  delivery_trouble: z
    .strictObject({ dead: z.number().int(), failing: z.number().int() })
    .optional()
    .openapi({ description: 'Admins only: deliveries dead-lettered (not re-sent) and deliveries still failing.' }),
}).openapi('Message');

const Attempt = z
  .strictObject({
    attempt_no: z.number().int(),
    started_at: Timestamp,
    verdict: z.enum(['delivered', 'failed']),
    status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's HTTP status; for viewers only on a delivered attempt." }),
    duration_ms: z.number().int().optional().openapi({ description: 'Admins only.' }),
    error: z.string().nullable().optional().openapi({ description: 'Admins only: why the attempt failed.' }),
    excerpt: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: "Admins only: the start (at most 1 KiB) of the receiver's answer." }),
  })
  .openapi('MessageDeliveryAttempt');

const Delivery = z
  .strictObject({
    id: z.string().optional().openapi({ description: "Admins only: the delivery's id (to re-send it)." }),
    channel_id: z.string().nullable().openapi({ description: 'Null once the channel is deleted.' }),
    channel_url: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: 'Admins only (a channel URL can itself be a credential).' }),
    state: z
      .enum(['pending', 'delivered', 'dead', 'cancelled'])
      .openapi({ description: '`pending` with attempts > 0 is retrying; `dead` is dead-lettered.' }),
    attempts: z.number().int(),
    max_attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
    delivered_at: Timestamp.nullable(),
    last_error: z.string().nullable().optional().openapi({ description: 'Admins only.' }),
    superseded: z.boolean().openapi({ description: 'A later re-send replaced this delivery.' }),
    resendable: z.boolean().optional().openapi({ description: 'Admins only: it may be re-sent now.' }),
    attempt_log: z.array(Attempt),
  })
  .openapi('MessageDelivery');

/** One message with the body sent to channels and its deliveries. */
export const MessageDetail = MessageFields.extend({
  read: z
    .boolean()
    .openapi({ description: "Whether the token's account has read it; reading it here does not change that." }),
  channel_body: z
    .string()
    .openapi({ description: 'The exact JSON text POSTed to channels (what their signature covers).' }),
  deliveries: z.strictObject({
    counts: z.strictObject({
      delivered: z.number().int(),
      pending: z.number().int(),
      dead: z.number().int(),
      cancelled: z.number().int(),
    }),
    items: z.array(Delivery).openapi({ description: 'At most 100, undelivered first; `counts` covers them all.' }),
  }),
}).openapi('MessageDetail');

/** What POST /api/messages answers (and replays for the same Idempotency-Key). */
export const EmittedMessage = MessageFields.extend({
  deliveries_queued: z
    .number()
    .int()
    .openapi({ description: "Deliveries queued: one per enabled channel taking the message's class." }),
}).openapi('EmittedMessage');

/** The list's query: paging plus its filters. */
export const ListQuery = PageQuery.extend({
  unread: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ description: '`true`: only messages you have not read; `false`: only those you have.' }),
  class: z.enum(CLASSES).optional(),
  cause: z.enum(CAUSES).optional(),
  subject_kind: z.string().min(1).max(EMIT_LIMITS.kind).optional().openapi({ description: 'Exact subject kind.' }),
  subject_key: z.string().min(1).max(EMIT_LIMITS.key).optional().openapi({ description: 'Exact subject key.' }),
  since: Timestamp.optional().openapi({ description: 'Only messages stored at or after this time.' }),
  until: Timestamp.optional().openapi({ description: 'Only messages stored before this time.' }),
});

/** Message ids for the read marks; ids of no message are ignored. */
export const MarkBody = z
  .strictObject({ ids: z.array(z.string().regex(MESSAGE_ID, 'Not a message id.')).min(1).max(MARK_READ_MAX) })
  .openapi('MessageIds');

/** POST /api/messages/read-all takes no fields (an empty object, or no body). */
export const ReadAllBody = z.strictObject({}).openapi('ReadAll');

/** The fields of `svc emit`; their content is checked by the emit service, whose messages come back per field. */
export const EmitBody = z
  .strictObject({
    cause: z.string().openapi({
      enum: [...CAUSES],
      description:
        'The class follows from it: drift → drift, aperture and declared-input → coverage, threshold → clock.',
    }),
    subject: z.strictObject({
      kind: z.string().openapi({ description: `At most ${EMIT_LIMITS.kind} characters.`, example: 'service' }),
      key: z
        .string()
        .openapi({ description: `The bare key, at most ${EMIT_LIMITS.key} characters.`, example: 'payments-api' }),
    }),
    instant: z
      .string()
      .refine((text) => parseInstant(text) !== undefined, `Not a valid ${INSTANT_SPELLING}.`)
      .optional()
      .openapi({
        format: 'date-time',
        example: '2026-01-15T12:00:00Z',
        description: 'When the cause happened (default: now), as `svc emit --instant` takes it.',
      }),
    headline: z.string().openapi({
      description: `The sentence stored and sent byte for byte, at most ${EMIT_LIMITS.headline} characters.`,
    }),
    census: z
      .number()
      .nullable()
      .optional()
      .openapi({ description: 'A whole number of zero or more, where the firing has a count.' }),
    source_id: z
      .string()
      .optional()
      .openapi({ description: 'Required for declared-input (its link target); refused for other causes.' }),
    seed_id: z
      .string()
      .optional()
      .openapi({ description: 'Required for aperture (its link target); refused for other causes.' }),
  })
  .openapi('EmitRequest');

/**
 * The optional Idempotency-Key header of POST /api/messages (lower-case: header names are case-insensitive and arrive
 * so).
 */
export const IdempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'An Idempotency-Key is 1 to 255 visible ASCII characters.')
    .optional()
    .openapi({
      description:
        'Any unique string you choose (a UUID is fine). The same key and body within 24 hours replay the first answer; the same key with another body is refused.',
    }),
});

/** Where each emit field is in the request body, for field errors. */
export const EMIT_FIELD: Record<EmitField, string> = {
  cause: 'cause',
  subjectKind: 'subject.kind',
  subjectKey: 'subject.key',
  instant: 'instant',
  headline: 'headline',
  census: 'census',
  sourceId: 'source_id',
  seedId: 'seed_id',
};

/** The request body as the emit service takes it. */
export function emitRequestOf(body: z.infer<typeof EmitBody>): EmitRequest {
  return {
    cause: body.cause,
    subject: body.subject,
    // The schema took only spellings parseInstant reads; NaN would be refused by emit()'s own check, never taken as
    // now.
    instant: body.instant === undefined ? undefined : (parseInstant(body.instant) ?? Number.NaN),
    headline: body.headline,
    census: body.census,
    sourceId: body.source_id,
    seedId: body.seed_id,
  };
}

function fields(m: MessageRow): z.infer<typeof MessageFields> {
  return {
    id: m.id,
    class: m.class,
    cause: m.cause,
    subject: { kind: m.subject_kind, key: m.subject_key },
    instant: iso(m.instant),
    headline: m.headline,
    census: m.census,
    link: m.link,
    created_at: iso(m.created_at),
  };
}

/** A list row; `trouble` is only on admins' rows. */
export function presentMessage(m: InboxItem): z.infer<typeof Message> {
  return {
    ...fields(m),
    read: m.read,
    ...(m.trouble ? { delivery_trouble: { dead: m.trouble.dead, failing: m.trouble.failing } } : {}),
  };
}

/** The answer of an emit. */
export function presentEmitted(m: MessageRow, deliveries: number): z.infer<typeof EmittedMessage> {
  return { ...fields(m), deliveries_queued: deliveries };
}

/** Deliveries as the message page shows them: URLs, errors, durations and excerpts to admins only. */
function presentDeliveries(d: MessageDeliveriesView, isAdmin: boolean): z.infer<typeof MessageDetail>['deliveries'] {
  const items = d.rows.map((r) => ({
    ...(isAdmin ? { id: r.id, channel_url: r.channel.url } : {}),
    channel_id: r.channel.id,
    state: r.state,
    attempts: r.attempts,
    max_attempts: r.maxAttempts,
    next_attempt_at: iso(r.nextAttemptAt),
    delivered_at: iso(r.deliveredAt),
    ...(isAdmin ? { last_error: r.lastError, resendable: r.resendable } : {}),
    superseded: r.superseded,
    attempt_log: r.attemptList.map((a) => ({
      attempt_no: a.attemptNo,
      started_at: iso(a.startedAt),
      verdict: a.verdict,
      status_code: isAdmin || a.verdict === 'delivered' ? a.statusCode : null,
      ...(isAdmin ? { duration_ms: a.durationMs, error: a.error, excerpt: a.excerpt } : {}),
    })),
  }));
  return { counts: { ...d.counts }, items };
}

/** One message with its deliveries, for an admin or not. */
export function presentDetail(detail: MessageDetailView, isAdmin: boolean): z.infer<typeof MessageDetail> {
  return {
    ...fields(detail.message),
    read: detail.message.read,
    channel_body: detail.message.body,
    deliveries: presentDeliveries(detail.deliveries, isAdmin),
  };
}

// The JSON API for deliveries: the console's Deliveries tab as data (same filters and order, keyset-paged),
// one delivery with its attempts, and the console's re-sends (one delivery, or every dead letter of a channel) through
// the same resend.service.ts rule.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import {
  apiAccount,
  apiApp,
  apiRoute,
  badCursor,
  decodeCursor,
  encodeCursor,
  IdParam,
  iso,
  jsonAnswer,
  pageOf,
  PageQuery,
  problem,
  Timestamp,
} from '../../http/api.ts';
import type { Ctx } from '../../http/env.ts';
import { ID_PATTERN } from '../../http/text.ts';
import { CLASSES } from '../messages/classes.ts';
import { deliveriesAfter, deliveryById, type DeliveryRow } from './deliveries-view.service.ts';
import { wordsOf, type Refusal } from '../refusals.ts';
import { RESEND_ALL_REFUSALS, RESEND_REFUSALS } from './resend.refusals.ts';
import { DELIVERY_ID } from './resend-notice.tsx';
import { resendDeadOfChannel, resendDelivery } from './resend.service.ts';

const STATES = ['pending', 'delivered', 'dead', 'cancelled'] as const;

const deliveryFields = {
  id: z.string(),
  message: z.strictObject({ id: z.string(), headline: z.string(), class: z.enum(CLASSES) }),
  channel: z
    .strictObject({ id: z.string(), url: z.string() })
    .nullable()
    .openapi({ description: 'null once the channel was deleted.' }),
  state: z.enum(STATES).openapi({
    description:
      '`dead` is dead-lettered: five failed attempts. `cancelled`: its channel was disabled or deleted first.',
  }),
  attempts: z.number().int().openapi({ description: 'Attempts made so far.' }),
  max_attempts: z.number().int(),
  last_error: z.string().nullable(),
  next_attempt_at: Timestamp.nullable().openapi({ description: 'When the next attempt is due; null unless pending.' }),
  delivered_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp.openapi({
    description: 'When the delivery last changed: created, an attempt recorded, dead-lettered, cancelled.',
  }),
  superseded: z.boolean().openapi({ description: 'A re-send replaced this delivery with a newer one.' }),
  resendable: z
    .boolean()
    .openapi({ description: 'Dead-lettered or cancelled, not re-sent yet, and its channel is enabled.' }),
};

const Delivery = z.strictObject(deliveryFields).openapi('Delivery');

const Attempt = z
  .strictObject({
    attempt_no: z.number().int(),
    started_at: Timestamp,
    duration_ms: z.number().int(),
    verdict: z.enum(['delivered', 'failed']),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    response_excerpt: z
      .string()
      .nullable()
      .openapi({ description: "The first bytes (at most 1 KiB) of the receiver's answer." }),
  })
  .openapi('DeliveryAttempt');

const DeliveryDetail = z
  .strictObject({
    ...deliveryFields,
    attempt_log: z.array(Attempt).openapi({ description: 'Every attempt, oldest first.' }),
  })
  .openapi('DeliveryDetail');

const ListQuery = PageQuery.extend({
  state: z.enum(STATES).optional(),
  channel: z.string().regex(ID_PATTERN).optional().openapi({ description: 'A channel id.' }),
});

const DeliveryId = z.object({
  id: z
    .string()
    .regex(DELIVERY_ID)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** The domain's refusals as problems, one table for this file; the details are the console's words. */
/** The problem answering a refusal of a re-send, in its catalogue's words (the page's notice says the same). */
function refuse<R extends string>(c: Ctx, catalogue: Record<R, Refusal>, reason: R) {
  const refusal: Refusal = catalogue[reason];
  return problem(c, refusal.status, refusal.type ?? reason, wordsOf(refusal, undefined));
}

/** A delivery the path names that does not exist (a read; a re-send says it in its catalogue's words). */
const NO_DELIVERY = 'There is no delivery with this id.';

const tags = ['Deliveries'];

const list = apiRoute({
  method: 'get',
  path: '/api/deliveries',
  tags,
  summary: 'List deliveries',
  description:
    'The Deliveries tab as data, cursor-paged. Order: with `state=dead` or `cancelled`, most recently changed first; with `state=pending`, next attempt first; otherwise newest message first.',
  request: { query: ListQuery },
  responses: { 200: jsonAnswer(pageOf(Delivery), 'A page of deliveries.') },
});

const one = apiRoute({
  method: 'get',
  path: '/api/deliveries/{id}',
  tags,
  summary: 'One delivery',
  description: "A delivery with every attempt: verdict, status code, error and the start of the receiver's answer.",
  request: { params: DeliveryId },
  refusals: { 404: NO_DELIVERY },
  responses: { 200: jsonAnswer(DeliveryDetail, 'The delivery.') },
});

const resend = apiRoute({
  method: 'post',
  path: '/api/deliveries/{id}/resend',
  tags,
  summary: 'Re-send one delivery',
  description:
    'A dead-lettered or cancelled delivery gets a new delivery of the same message to the same channel, with a fresh set of attempts, due now. The old one stays as history.',
  request: { params: DeliveryId },
  refusals: {
    404: wordsOf(RESEND_REFUSALS['not-found'], undefined),
    409: 'Not dead-lettered or cancelled (`not-undelivered`), `already-resent`, `channel-deleted` or `channel-disabled`.',
  },
  responses: {
    201: {
      ...jsonAnswer(DeliveryDetail, 'The new delivery.'),
      headers: z.object({ Location: z.string().openapi({ description: "The new delivery's address." }) }),
    },
  },
});

const resendDead = apiRoute({
  method: 'post',
  path: '/api/channels/{id}/resend-dead',
  tags,
  summary: 'Re-send every dead letter of a channel',
  description:
    'Re-queues every dead-lettered delivery of the channel that no re-send replaced yet, in one go (after its receiver was fixed). Cancelled ones are left alone.',
  request: { params: IdParam },
  refusals: {
    404: wordsOf(RESEND_ALL_REFUSALS['not-found'], undefined),
    409: 'The channel is disabled (`channel-disabled`): enable it first.',
  },
  responses: {
    200: jsonAnswer(
      z
        .strictObject({
          count: z.number().int().openapi({ description: 'How many were re-queued; 0 when none was waiting.' }),
        })
        .openapi('ResendCount'),
      'Re-queued.',
    ),
  },
});

/** A delivery as the API presents it. */
function present(r: DeliveryRow): z.infer<typeof Delivery> {
  return {
    id: r.id,
    message: { id: r.messageId, headline: r.headline, class: r.messageClass },
    channel: r.channel.id === null || r.channel.url === null ? null : { id: r.channel.id, url: r.channel.url },
    state: r.state,
    attempts: r.attempts,
    max_attempts: r.maxAttempts,
    last_error: r.lastError,
    next_attempt_at: r.state === 'pending' ? iso(r.nextAttemptAt) : null,
    delivered_at: iso(r.deliveredAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.at),
    superseded: r.superseded,
    resendable: r.resendable,
  };
}

/** A delivery with its attempts, or undefined. */
async function detail(deps: Deps, id: string): Promise<z.infer<typeof DeliveryDetail> | undefined> {
  const d = await deliveryById(deps, id);
  if (!d) return undefined;
  const attempt_log = d.attemptList.map((a) => ({
    attempt_no: a.attemptNo,
    started_at: iso(a.startedAt),
    duration_ms: a.durationMs,
    verdict: a.verdict,
    status_code: a.statusCode,
    error: a.error,
    response_excerpt: a.excerpt,
  }));
  return { ...present(d), attempt_log };
}

/** The delivery routes under /api/deliveries, and a channel's re-send of its dead letters (admin only). */
export function deliveriesApiRoutes(deps: Deps) {
  const app = apiApp();

  app.openapi(list, async (c) => {
    const { cursor, limit, state, channel } = c.req.valid('query');
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && after === undefined) return badCursor(c);
    const slice = await deliveriesAfter(deps, { state, channelId: channel }, after, limit);
    if (!slice.ok) return badCursor(c);
    return c.json({ items: slice.rows.map(present), next_cursor: slice.next ? encodeCursor(slice.next) : null }, 200);
  });

  app.openapi(one, async (c) => {
    const d = await detail(deps, c.req.valid('param').id);
    return d ? c.json(d, 200) : problem(c, 404, 'not-found', NO_DELIVERY);
  });

  app.openapi(resend, async (c) => {
    const result = await resendDelivery(deps, { actorId: apiAccount(c).id }, c.req.valid('param').id);
    if (!result.ok) return refuse(c, RESEND_REFUSALS, result.reason);
    const d = await detail(deps, result.deliveryId);
    // Its message pruned between the re-send and this read: the row is gone with it.
    if (!d) return refuse(c, RESEND_REFUSALS, 'not-found');
    return c.json(d, 201, { Location: `/api/deliveries/${d.id}` });
  });

  app.openapi(resendDead, async (c) => {
    const result = await resendDeadOfChannel(deps, { actorId: apiAccount(c).id }, c.req.valid('param').id);
    if (!result.ok) return refuse(c, RESEND_ALL_REFUSALS, result.reason);
    return c.json({ count: result.count }, 200);
  });

  return app;
}

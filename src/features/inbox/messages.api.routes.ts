// The message store over the API: the list and one message (every token), read marks (every token's own), and emit
// (admins), which honours an Idempotency-Key so the rest of the service can post messages over HTTP and retry safely.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import {
  apiAccount,
  apiApp,
  apiRoute,
  badCursor,
  invalid,
  jsonAnswer,
  jsonBody,
  pageOf,
  problem,
  timeIdCursor,
  timeIdCursorOf,
} from '../../http/api.ts';
import type { Ctx } from '../../http/env.ts';
import { EMIT_REFUSALS } from '../messages/emit.refusals.ts';
import { emitOnce } from '../messages/idempotency.service.ts';
import { inboxPage, messageDetail } from './inbox.service.ts';
import {
  EMIT_FIELD,
  EmitBody,
  emitRequestOf,
  EmittedMessage,
  IdempotencyHeader,
  ListQuery,
  MarkBody,
  Message,
  MessageDetail,
  MessageIdParam,
  presentDetail,
  presentEmitted,
  presentMessage,
  ReadAllBody,
} from './messages.api.schemas.ts';
import { markAllRead, markManyUnread, markRead } from '../messages/read-state.service.ts';

/** This file's refusals: problem type → status and what the client should do. */
const REFUSALS = {
  'not-found': [404, 'There is no message with this id; it may have been removed by the retention setting.'],
  'idempotency-key-reused': [
    422,
    'This Idempotency-Key was used within the last 24 hours with another body. Use a new key for a new message.',
  ],
} as const;

function refuse(c: Ctx, type: keyof typeof REFUSALS) {
  const [status, detail] = REFUSALS[type];
  return problem(c, status, type, detail);
}

const list = apiRoute({
  method: 'get',
  path: '/api/messages',
  tags: ['Messages'],
  summary: 'List messages',
  description:
    "Newest first (by the time stored), cursor-paged, with the caller's read mark on each. Any token may read.",
  request: { query: ListQuery },
  responses: { 200: jsonAnswer(pageOf(Message), 'A page of messages.') },
});

const one = apiRoute({
  method: 'get',
  path: '/api/messages/{id}',
  tags: ['Messages'],
  summary: 'One message and its deliveries',
  description:
    "The message, the exact body sent to channels and its delivery state per channel with every attempt. Admins also get channel URLs, errors, durations and the receivers' answers. Unlike opening it in the console, reading it here does not mark it read: a program fetching a message is not a person reading it (mark it with POST /api/messages/read).",
  request: { params: MessageIdParam },
  refusals: { 404: 'No message has this id (or it was removed by the retention setting).' },
  responses: { 200: jsonAnswer(MessageDetail, 'The message.') },
});

const read = apiRoute({
  method: 'post',
  path: '/api/messages/read',
  tags: ['Messages'],
  summary: 'Mark messages read',
  description: "For the token's account only. Ids of no message are ignored. Viewers' tokens may use it.",
  request: { body: jsonBody(MarkBody) },
  responses: { 204: { description: 'Marked.' } },
});

const unread = apiRoute({
  method: 'post',
  path: '/api/messages/unread',
  tags: ['Messages'],
  summary: 'Mark messages unread',
  description: "For the token's account only. Ids of no message are ignored. Viewers' tokens may use it.",
  request: { body: jsonBody(MarkBody) },
  responses: { 204: { description: 'Marked.' } },
});

const readAll = apiRoute({
  method: 'post',
  path: '/api/messages/read-all',
  tags: ['Messages'],
  summary: 'Mark every message read',
  description:
    "Every message now in the store, for the token's account only; messages stored later arrive unread. Send no body or `{}`.",
  request: { body: { ...jsonBody(ReadAllBody), required: false } },
  responses: { 204: { description: 'Marked.' } },
});

const emitRoute = apiRoute({
  method: 'post',
  path: '/api/messages',
  tags: ['Messages'],
  summary: 'Emit a message',
  description:
    'Stores a message and queues it for every enabled channel of its class, exactly as `svc emit` does, with the same fields and checks. Admins only. With an Idempotency-Key, a retry with the same key and body within 24 hours answers the first answer again (marked `Idempotent-Replayed: true`) and stores nothing; two requests racing with one key store one message. A refused request stores nothing, so it may be fixed and sent again with the same key.',
  request: { headers: IdempotencyHeader, body: jsonBody(EmitBody) },
  refusals: {
    422: 'A field is not valid (`errors` names each, with the same words as `svc emit`), the Idempotency-Key header is malformed, or the key was used with another body (`idempotency-key-reused`).',
  },
  responses: {
    201: {
      ...jsonAnswer(
        EmittedMessage,
        'Stored and queued; or, with `Idempotent-Replayed: true`, the first answer to this key.',
      ),
      headers: z.object({
        Location: z.string().openapi({ description: 'The message: /api/messages/{id}.' }),
        'Idempotent-Replayed': z.enum(['true']).optional().openapi({
          description: 'Present when this is the stored answer to an earlier request with the same Idempotency-Key.',
        }),
      }),
    },
  },
});

/** The routes of the message store under /api/messages. */
export function messagesApiRoutes(deps: Deps) {
  const app = apiApp();

  app.openapi(list, async (c) => {
    const q = c.req.valid('query');
    const position = q.cursor === undefined ? undefined : timeIdCursor(q.cursor);
    if (position === null) return badCursor(c);
    const before = position && { createdAt: position.at, id: position.id };
    const account = apiAccount(c);
    const filter = {
      unreadOnly: q.unread === 'true' || undefined,
      readOnly: q.unread === 'false' || undefined,
      class: q.class,
      cause: q.cause,
      subjectKind: q.subject_kind,
      subjectKey: q.subject_key,
      since: q.since === undefined ? undefined : Date.parse(q.since),
      until: q.until === undefined ? undefined : Date.parse(q.until),
    };
    const page = await inboxPage(deps, account.id, before, filter, account.role === 'admin', q.limit);
    const next = page.next ? timeIdCursorOf(page.next.createdAt, page.next.id) : null;
    return c.json({ items: page.items.map(presentMessage), next_cursor: next }, 200);
  });

  app.openapi(one, async (c) => {
    const account = apiAccount(c);
    const detail = await messageDetail(deps, account.id, c.req.valid('param').id);
    if (!detail) return refuse(c, 'not-found');
    return c.json(presentDetail(detail, account.role === 'admin'), 200);
  });

  app.openapi(read, async (c) => {
    await markRead(deps, apiAccount(c).id, c.req.valid('json').ids);
    return c.body(null, 204);
  });

  app.openapi(unread, async (c) => {
    await markManyUnread(deps, apiAccount(c).id, c.req.valid('json').ids);
    return c.body(null, 204);
  });

  app.openapi(readAll, async (c) => {
    await markAllRead(deps, apiAccount(c).id);
    return c.body(null, 204);
  });

  app.openapi(emitRoute, async (c) => {
    const result = await emitOnce(deps, {
      actorId: apiAccount(c).id,
      key: c.req.valid('header')['idempotency-key'],
      request: emitRequestOf(c.req.valid('json')),
      answer: (message, deliveries) => ({ status: 201, response: JSON.stringify(presentEmitted(message, deliveries)) }),
    });
    if (!result.ok) {
      if (result.reason === 'key-reused') return refuse(c, 'idempotency-key-reused');
      if (result.reason === 'not-admin') {
        const { status, type, words } = EMIT_REFUSALS['not-admin'];
        return problem(c, status, type, words);
      }
      return invalid(
        c,
        Object.fromEntries(
          Object.entries(result.errors).map(([field, detail]) => [
            EMIT_FIELD[field as keyof typeof EMIT_FIELD],
            detail,
          ]),
        ),
      );
    }
    const body: z.infer<typeof EmittedMessage> = JSON.parse(result.response);
    const headers: Record<string, string> = { Location: `/api/messages/${body.id}` };
    if (result.replayed) headers['Idempotent-Replayed'] = 'true';
    return c.json(body, 201, headers);
  });

  return app;
}

// The JSON API for notification channels: list, one, create, update, delete and the connection check, over
// the console's own service calls (channels.service.ts), so the URL policy, the class rule and the secret's
// replace/clear/keep rule are the same ones. The secret is write-only: answers carry `has_secret`, never the value.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import {
  AnyIdParam,
  apiAccount,
  apiApp,
  apiRoute,
  badCursor,
  IdParam,
  invalid,
  iso,
  jsonAnswer,
  jsonBody,
  pageFrom,
  pageOf,
  PageQuery,
  problem,
  timeIdCursor,
  Timestamp,
} from '../../http/api.ts';
import type { Ctx } from '../../http/env.ts';
import { isId } from '../../http/text.ts';
import { CLASSES, type MessageClass } from '../messages/classes.ts';
import type { ChannelSummary } from './channels.repo.ts';
import {
  channelHealth,
  channelsAfter,
  checkChannelConnection,
  createChannel,
  deleteChannel,
  findChannelById,
  patchChannel,
} from './channels.service.ts';
import { CHANNEL_ACT_REFUSALS, type ChannelActReason } from './channels.refusals.ts';
import { wordsOf, type Refusal } from '../refusals.ts';

const ClassList = z.array(z.enum(CLASSES)).max(10);

// A channel as the API shows it: the secret reduced to `has_secret`.
const ChannelSchema = z
  .strictObject({
    id: z.string(),
    url: z.string().openapi({ example: 'https://hooks.example.com/svc' }),
    classes: ClassList.openapi({ description: 'The message classes routed to this channel, sorted.' }),
    enabled: z.boolean(),
    has_secret: z
      .boolean()
      .openapi({ description: 'Whether bodies are signed with a secret. The secret itself is never returned.' }),
    health: z
      .strictObject({
        state: z.enum(['healthy', 'failing', 'disabled']),
        consecutive_failures: z.number().int(),
        failing_since: Timestamp.nullable().openapi({ description: 'The first failure of the current streak.' }),
        last_error: z.string().nullable(),
        last_error_at: Timestamp.nullable(),
        last_success_at: Timestamp.nullable(),
      })
      .openapi('ChannelHealth'),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z
      .strictObject({ id: z.string(), username: z.string().nullable() })
      .openapi({ description: 'The account that created the channel.' }),
  })
  .openapi('Channel');

const CheckSchema = z
  .strictObject({
    ok: z
      .boolean()
      .openapi({ description: 'Whether the receiver could be reached. Nothing was sent to it either way.' }),
    steps: z.array(
      z.strictObject({
        step: z.enum(['resolve', 'policy', 'tcp', 'tls']),
        outcome: z.enum(['ok', 'failed', 'skipped']),
        detail: z.string(),
      }),
    ),
  })
  .openapi('ConnectionCheck');

const SECRET_DOC = 'Signs each body with HMAC-SHA256 (X-Svc-Signature). Write-only.';
const NewChannelBody = z
  .strictObject({
    url: z.string().openapi({
      description: 'https://, or http:// to a loopback IP literal only. Internal addresses are refused.',
      example: 'https://hooks.example.com/svc',
    }),
    classes: ClassList.openapi({ description: 'At least one of drift, coverage, clock.' }),
    secret: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: `${SECRET_DOC} Absent, null or blank: no secret.` }),
    enabled: z.boolean().optional().openapi({ description: 'Default true.' }),
  })
  .openapi('NewChannel');

const ChannelPatchBody = z
  .strictObject({
    url: z.string().optional(),
    classes: ClassList.optional(),
    enabled: z.boolean().optional().openapi({
      description: 'false stops routing to the channel; its pending deliveries are cancelled by the worker.',
    }),
    secret: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: `${SECRET_DOC} A string replaces the stored secret, null removes it, absent keeps it.` }),
  })
  .openapi('ChannelPatch');

/**
 * A refusal of a channel act as a whole, from the catalogue the settings page reads too (field errors go out through
 * invalid()).
 */
const refuse = (c: Ctx, reason: ChannelActReason) => {
  const refusal: Refusal = CHANNEL_ACT_REFUSALS[reason];
  return problem(c, refusal.status, refusal.type ?? reason, wordsOf(refusal, undefined));
};
const NOT_FOUND = wordsOf(CHANNEL_ACT_REFUSALS['not-found'], undefined);

const tags = ['Channels'];

const list = apiRoute({
  method: 'get',
  path: '/api/channels',
  tags,
  summary: 'List channels',
  description: 'Every notification channel, oldest first, cursor-paged.',
  request: { query: PageQuery },
  responses: { 200: jsonAnswer(pageOf(ChannelSchema), 'A page of channels.') },
});

const one = apiRoute({
  method: 'get',
  path: '/api/channels/{id}',
  tags,
  summary: 'One channel',
  description: 'A channel with its health: state, consecutive failures, and the last error.',
  request: { params: IdParam },
  refusals: { 404: NOT_FOUND },
  responses: { 200: jsonAnswer(ChannelSchema, 'The channel.') },
});

const create = apiRoute({
  method: 'post',
  path: '/api/channels',
  tags,
  summary: 'Create a channel',
  description:
    "Creates a channel authored by the token's account. The URL policy is the console's: an internal address is a 422 on `url`.",
  request: { body: jsonBody(NewChannelBody) },
  responses: {
    201: {
      ...jsonAnswer(ChannelSchema, 'Created.'),
      headers: z.object({ Location: z.string().openapi({ description: "The new channel's address." }) }),
    },
  },
});

const update = apiRoute({
  method: 'patch',
  path: '/api/channels/{id}',
  tags,
  summary: 'Update a channel',
  description:
    'Changes the fields sent; absent fields keep their values. `secret`: a string replaces, null clears, absent keeps.',
  request: { params: IdParam, body: jsonBody(ChannelPatchBody) },
  refusals: { 404: NOT_FOUND },
  responses: { 200: jsonAnswer(ChannelSchema, 'The channel as updated.') },
});

const remove = apiRoute({
  method: 'delete',
  path: '/api/channels/{id}',
  tags,
  summary: 'Delete a channel',
  description:
    'Idempotent: 204 whether or not it existed. Its pending deliveries are cancelled; finished ones stay on their messages.',
  request: { params: AnyIdParam },
  responses: { 204: { description: 'Deleted, or already gone.' } },
});

const check = apiRoute({
  method: 'post',
  path: '/api/channels/{id}/check',
  tags,
  summary: 'Check the connection',
  description:
    'Resolves the host, applies the address policy, opens TCP and (for https) TLS as a delivery would, and sends nothing. The result is neither stored nor logged.',
  request: { params: IdParam },
  refusals: { 404: NOT_FOUND },
  responses: { 200: jsonAnswer(CheckSchema, 'Each step and its outcome.') },
});

/** A channel as the API presents it. */
function present(ch: ChannelSummary): z.infer<typeof ChannelSchema> {
  const health = channelHealth(ch);
  return {
    id: ch.id,
    url: ch.url,
    // Stored by the service from checked classes only.
    classes: ch.classes.split(',') as MessageClass[],
    enabled: ch.enabled === 1,
    has_secret: ch.hasSecret,
    health: {
      state: health.state,
      consecutive_failures: ch.consecutive_failures,
      failing_since: iso(health.state === 'failing' ? health.since : ch.failing_since),
      last_error: ch.last_error,
      last_error_at: iso(ch.last_error_at),
      last_success_at: iso(ch.last_success_at),
    },
    created_at: iso(ch.created_at),
    updated_at: iso(ch.updated_at),
    created_by: { id: ch.created_by, username: ch.createdByUsername },
  };
}

/** The channel routes under /api/channels (admin only). */
export function channelsApiRoutes(deps: Deps) {
  const app = apiApp();

  app.openapi(list, async (c) => {
    const { cursor, limit } = c.req.valid('query');
    const after = cursor === undefined ? undefined : timeIdCursor(cursor);
    if (after === null) return badCursor(c);
    const rows = await channelsAfter(deps, after && { createdAt: after.at, id: after.id }, limit + 1);
    const page = pageFrom(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return c.json({ items: page.rows.map(present), next_cursor: page.next_cursor }, 200);
  });

  app.openapi(one, async (c) => {
    const ch = await findChannelById(deps, c.req.valid('param').id);
    if (!ch) return refuse(c, 'not-found');
    return c.json(present(ch), 200);
  });

  app.openapi(create, async (c) => {
    const body = c.req.valid('json');
    const result = await createChannel(
      deps,
      { actorId: apiAccount(c).id },
      { url: body.url, classes: body.classes, secret: body.secret ?? '', enabled: body.enabled },
    );
    if (!result.ok) return result.reason === 'invalid' ? invalid(c, result.errors) : refuse(c, result.reason);
    const ch = (await findChannelById(deps, result.id))!;
    return c.json(present(ch), 201, { Location: `/api/channels/${ch.id}` });
  });

  app.openapi(update, async (c) => {
    const { id } = c.req.valid('param');
    const result = await patchChannel(deps, { actorId: apiAccount(c).id }, id, c.req.valid('json'));
    if (!result.ok) return result.reason === 'invalid' ? invalid(c, result.errors) : refuse(c, result.reason);
    const ch = await findChannelById(deps, id);
    // Deleted between the update and this read: it is gone all the same.
    if (!ch) return refuse(c, 'not-found');
    return c.json(present(ch), 200);
  });

  app.openapi(remove, async (c) => {
    const { id } = c.req.valid('param');
    // An id that cannot name a channel is as gone as a deleted one, and is never looked up.
    const result = isId(id) ? await deleteChannel(deps, { actorId: apiAccount(c).id }, id) : undefined;
    return result?.ok === false ? refuse(c, result.reason) : c.body(null, 204);
  });

  app.openapi(check, async (c) => {
    const checked = await checkChannelConnection(deps, { actorId: apiAccount(c).id }, c.req.valid('param').id);
    if (!checked.ok) return refuse(c, checked.reason);
    const result = checked.check;
    return c.json(
      { ok: result.ok, steps: result.steps.map((s) => ({ step: s.step, outcome: s.outcome, detail: s.detail })) },
      200,
    );
  });

  return app;
}

// Invitations over the JSON API, admin-only (reads included): the open ones, minting one (its join link in that answer
// only, and in the log line every mint writes), and revoking one. The same domain functions as the team tab.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import {
  AnyIdParam,
  apiAccount,
  apiApp,
  apiRoute,
  badCursor,
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
import { externalOrigin } from '../../http/request.ts';
import { isId } from '../../http/text.ts';
import { checkInvitationNote, mintInvitation, revokeInvitation } from './invitations.service.ts';
import { InvitationSchema, toInvitation } from './team.api.schema.ts';
import { wordsOf, type Refusal } from '../refusals.ts';
import { MINT_INVITATION_REFUSALS, REVOKE_INVITATION_REFUSALS, type TeamFacts } from './team.refusals.ts';
import { listInvitations } from './team.service.ts';

/** A refusal of an invitation act, from its catalogue (the team tab shows the same words). */
const refuse = <R extends string>(c: Ctx, catalogue: Record<R, Refusal<TeamFacts>>, reason: R) => {
  const refusal: Refusal<TeamFacts> = catalogue[reason];
  return problem(c, refusal.status, refusal.type ?? reason, wordsOf(refusal, { username: '', via: 'token' }));
};

const tags = ['Invitations'];
const Role = z.enum(['admin', 'viewer']);

const MintBody = z.strictObject({
  role: Role.openapi({ description: 'The role the new account gets; the only thing an invitation binds.' }),
  note: z
    .string()
    .nullable()
    .optional()
    .openapi({ description: 'Labels it in the list of open invitations (at most 200 characters); binds nothing.' }),
});

const MintedSchema = z
  .strictObject({
    id: z.string(),
    role: Role,
    note: z.string().nullable(),
    created_at: Timestamp,
    expires_at: Timestamp,
    join_link: z
      .string()
      .openapi({ description: 'Shown in this answer only (and written to the service log); send it to the invitee.' }),
  })
  .openapi('MintedInvitation');

const list = apiRoute({
  method: 'get',
  path: '/api/invitations',
  tags,
  summary: 'List open invitations',
  description:
    'Invitations neither accepted nor revoked, newest first, cursor-paged; filter by `state`. Never a token or join link.',
  request: { query: PageQuery.extend({ state: z.enum(['pending', 'expired']).optional() }) },
  responses: { 200: jsonAnswer(pageOf(InvitationSchema), 'A page of open invitations.') },
});

const mint = apiRoute({
  method: 'post',
  path: '/api/invitations',
  tags,
  summary: 'Create an invitation',
  description:
    'A single-use join link for the role, valid 7 days, in this answer only. The invitee chooses a username and password.',
  request: { body: jsonBody(MintBody) },
  responses: { 201: jsonAnswer(MintedSchema, 'The invitation and its join link, this once.') },
});

const revoke = apiRoute({
  method: 'delete',
  path: '/api/invitations/{id}',
  tags,
  summary: 'Revoke an invitation',
  description:
    'Its link stops working. Idempotent: one already revoked, or that is not there, answers 204. One already accepted answers 409.',
  request: { params: AnyIdParam },
  refusals: { 409: '`invitation-spent`: it was accepted; its account exists.' },
  responses: { 204: { description: 'Revoked, or there was nothing to revoke.' } },
});

/** The /api/invitations routes, mounted by app.ts. */
export function invitationsApiRoutes(deps: Deps) {
  const app = apiApp();

  app.openapi(list, async (c) => {
    const { cursor, limit, state } = c.req.valid('query');
    const after = cursor === undefined ? undefined : timeIdCursor(cursor);
    if (after === null) return badCursor(c);
    const rows = await listInvitations(deps, {
      after: after && { createdAt: after.at, id: after.id },
      limit: limit + 1,
      state,
    });
    const page = pageFrom(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return c.json({ items: page.rows.map(toInvitation), next_cursor: page.next_cursor }, 200);
  });

  app.openapi(mint, async (c) => {
    const body = c.req.valid('json');
    const note = checkInvitationNote(body.note ?? undefined);
    if (!note.ok) return invalid(c, { note: note.message });
    const { id: actorId, tokenId } = apiAccount(c);
    const base = externalOrigin(c, deps.config);
    const minted = await mintInvitation(deps, {
      actorId,
      via: 'token',
      tokenId,
      role: body.role,
      note: note.note ?? undefined,
      base,
    });
    if (!minted.ok) return refuse(c, MINT_INVITATION_REFUSALS, minted.reason);
    const answer = {
      id: minted.id,
      role: minted.role,
      note: minted.note,
      created_at: iso(minted.createdAt),
      expires_at: iso(minted.expiresAt),
      join_link: minted.joinLink,
    };
    return c.json(answer, 201);
  });

  app.openapi(revoke, async (c) => {
    const { id } = c.req.valid('param');
    // An id of another shape names no invitation: nothing to revoke.
    if (!isId(id)) return c.body(null, 204);
    const result = await revokeInvitation(deps, { actorId: apiAccount(c).id }, id);
    return result.ok ? c.body(null, 204) : refuse(c, REVOKE_INVITATION_REFUSALS, result.reason);
  });

  return app;
}

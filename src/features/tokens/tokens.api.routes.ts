// GET /api/me and the caller's own tokens (list, revoke). Minting stays on the Profile page behind "Confirm it's you":
// a token never mints another.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import { AnyIdParam, apiAccount, apiApp, apiRoute, iso, jsonAnswer, Timestamp } from '../../http/api.ts';
import { isId } from '../../http/text.ts';
import { factorKinds } from '../second-factor/factors.ts';
import { SecondFactors } from './factor-kinds.api.schema.ts';
import { factorsOfAccount } from '../second-factor/second-factor.service.ts';
import { listTokens, revokeToken } from './tokens.service.ts';

const Me = z
  .strictObject({
    id: z.string(),
    username: z.string(),
    role: z.enum(['admin', 'viewer']),
    second_factors: SecondFactors,
    token: z
      .strictObject({ id: z.string(), read_only: z.boolean() })
      .openapi({ description: 'The token this request came with.' }),
  })
  .openapi('Me');

const Token = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable().openapi({ description: 'Written at most once a minute.' }),
    expired: z.boolean(),
    read_only: z.boolean(),
  })
  .openapi('Token');

const me = apiRoute({
  method: 'get',
  path: '/api/me',
  tags: ['Tokens'],
  summary: 'Who the token acts as',
  description:
    'The account behind the token, with its role and the kinds of second factor it has, as read on this request.',
  responses: { 200: jsonAnswer(Me, "The token's account.") },
});

const list = apiRoute({
  method: 'get',
  path: '/api/tokens',
  tags: ['Tokens'],
  summary: 'Your own tokens',
  description: 'Never the tokens themselves nor their hashes. Minting happens on the Profile page.',
  responses: { 200: jsonAnswer(z.strictObject({ items: z.array(Token) }), "The caller's tokens, newest first.") },
});

const revoke = apiRoute({
  method: 'delete',
  path: '/api/tokens/{id}',
  tags: ['Tokens'],
  summary: 'Revoke one of your tokens',
  description:
    'Idempotent: an id that is not one of your tokens (already revoked, or never yours) is a no-op. Revoking the token the request came with is allowed: it stops working at once.',
  request: { params: AnyIdParam },
  responses: { 204: { description: 'Revoked, or there was nothing to revoke.' } },
});

export function tokensApiRoutes(deps: Deps) {
  const app = apiApp();

  app.openapi(me, async (c) => {
    const account = apiAccount(c);
    return c.json(
      {
        id: account.id,
        username: account.username,
        role: account.role,
        second_factors: factorKinds(await factorsOfAccount(deps, account.id)),
        token: { id: account.tokenId, read_only: account.readOnly },
      },
      200,
    );
  });

  app.openapi(list, async (c) => {
    const tokens = await listTokens(deps, apiAccount(c).id);
    const items = tokens.map((t) => ({
      id: t.id,
      name: t.name,
      created_at: iso(t.createdAt),
      expires_at: iso(t.expiresAt),
      last_used_at: iso(t.lastUsedAt),
      expired: t.expired,
      read_only: t.readOnly,
    }));
    return c.json({ items }, 200);
  });

  app.openapi(revoke, async (c) => {
    const { id } = c.req.valid('param');
    // An id that cannot name a token is never looked up (PostgreSQL refuses some bytes outright).
    if (isId(id)) await revokeToken(deps, apiAccount(c).id, id);
    return c.body(null, 204);
  });

  return app;
}

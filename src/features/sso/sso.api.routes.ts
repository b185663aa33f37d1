// The JSON API for single sign-on: providers (list, one, declare, change with the secret's
// replace/clear/keep, delete) and linked identities (list, remove), over the Settings tab's own service calls, so the
// field rules, the discovery check and the duplicate-slug refusal are the console's. Admin only, reads included.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import {
  AnyIdParam,
  apiAccount,
  apiApp,
  apiRoute,
  badCursor,
  IdParam,
  jsonAnswer,
  jsonBody,
  pageOf,
  PageQuery,
  problem,
  timeIdCursor,
  timeIdCursorOf,
} from '../../http/api.ts';
import type { Ctx } from '../../http/env.ts';
import { externalOrigin } from '../../http/request.ts';
import { ID_PATTERN, isId } from '../../http/text.ts';
import {
  NewSsoProvider,
  presentIdentity,
  presentProvider,
  SsoIdentity,
  SsoProvider,
  SsoProviderPatch,
} from './sso.api.schema.ts';
import {
  changeProvider,
  createProvider,
  identitiesPage,
  providerDetails,
  removeIdentity,
  removeProvider,
  type ChangeProviderResult,
  type ProviderWriteResult,
  type RemoveResult,
} from './sso.providers.service.ts';
import { wordsOf, type Refusal } from '../refusals.ts';
import { PROVIDER_REFUSALS, type ProviderFacts } from './sso.refusals.ts';

/** What the API says of a failed discovery as a whole; the issuer's error says why, in the console's words. */
const DISCOVERY_FAILED =
  "svc could not use the provider's discovery document (see errors); nothing was saved. Fix the issuer, or send skip_discovery: true to save anyway.";
/** A provider the path names that does not exist (a read; a refused act says it in its catalogue's words). */
const NO_PROVIDER = 'There is no provider with this id.';

type Refused = Extract<ProviderWriteResult | ChangeProviderResult | RemoveResult, { ok: false }>;

/** The problem for a refused act, from its catalogue; a field's refusal (slug, issuer) names that field too. */
function refuse(c: Ctx, refused: Refused) {
  const refusal: Refusal<ProviderFacts> = PROVIDER_REFUSALS[refused.reason];
  const facts: ProviderFacts =
    refused.reason === 'undiscoverable'
      ? { problem: refused.problem, issuer: refused.issuer }
      : refused.reason === 'client-auth-not-listed'
        ? { method: refused.method, listed: refused.listed }
        : {};
  const words = wordsOf(refusal, facts);
  const errors =
    refusal.field === undefined ? {} : { errors: [{ in: 'body' as const, field: refusal.field, detail: words }] };
  return problem(
    c,
    refusal.status,
    refusal.type ?? refused.reason,
    refused.reason === 'undiscoverable' ? DISCOVERY_FAILED : words,
    errors,
  );
}

const idFilter = (what: string) =>
  z
    .string()
    .regex(ID_PATTERN, `Not an id of ${what}.`)
    .optional()
    .openapi({ description: `Only identities of this ${what}.` });
const IdentityQuery = PageQuery.extend({ provider_id: idFilter('provider'), account_id: idFilter('account') });

const tags = ['Single sign-on'];
const CREATE_422 =
  "A field is not valid (`invalid`, one entry per field), discovery failed (`discovery-failed`, on `issuer`), or the provider's discovery does not list the `client_auth_method` chosen (`client-auth-not-listed`).";

const listProviders = apiRoute({
  method: 'get',
  path: '/api/sso/providers',
  tags,
  summary: 'List providers',
  description:
    'Every declared OpenID Connect provider, by display name. Client secrets are never returned: `has_secret` says whether one is set.',
  responses: { 200: jsonAnswer(z.strictObject({ items: z.array(SsoProvider) }), 'The providers.') },
});

const oneProvider = apiRoute({
  method: 'get',
  path: '/api/sso/providers/{id}',
  tags,
  summary: 'One provider',
  description: 'A provider with its callback URLs and how many identities are linked through it.',
  request: { params: IdParam },
  refusals: { 404: NO_PROVIDER },
  responses: { 200: jsonAnswer(SsoProvider, 'The provider.') },
});

const createProviderRoute = apiRoute({
  method: 'post',
  path: '/api/sso/providers',
  tags,
  summary: 'Declare a provider',
  description:
    "Declares a provider, enabled unless `enabled` is false, authored by the token's account. svc first fetches <issuer>/.well-known/openid-configuration as a sign-in would; when that fails nothing is saved (422 `discovery-failed`) unless `skip_discovery` is true. A disabled provider is saved without the check.",
  request: { body: jsonBody(NewSsoProvider) },
  refusals: { 409: wordsOf(PROVIDER_REFUSALS['duplicate-slug'], {}), 422: CREATE_422 },
  responses: {
    201: {
      ...jsonAnswer(SsoProvider, 'Declared.'),
      headers: z.object({ Location: z.string().openapi({ description: "The new provider's address." }) }),
    },
  },
});

const updateProvider = apiRoute({
  method: 'patch',
  path: '/api/sso/providers/{id}',
  tags,
  summary: 'Change a provider',
  description:
    'Changes the fields sent; the others keep their values. `client_secret`: a string replaces, null removes, absent keeps. A change naming `issuer`, `client_id` or `enabled` of a provider that stays enabled, or choosing a `client_auth_method` other than `automatic`, runs the discovery check first (skip it with `skip_discovery`). A new issuer removes every identity linked through the provider. Disabling the provider, or giving it a new issuer or client id, ends every session signed in through it, in the same transaction (password sessions and API tokens stay). A new issuer, client id, secret or method forgets the method `automatic` learned.',
  request: { params: IdParam, body: jsonBody(SsoProviderPatch) },
  refusals: {
    404: wordsOf(PROVIDER_REFUSALS['not-found'], {}),
    409: wordsOf(PROVIDER_REFUSALS['duplicate-slug'], {}),
    422: CREATE_422,
  },
  responses: { 200: jsonAnswer(SsoProvider, 'The provider as changed.') },
});

const deleteProvider = apiRoute({
  method: 'delete',
  path: '/api/sso/providers/{id}',
  tags,
  summary: 'Delete a provider',
  description:
    'Deletes the provider and every identity linked through it, and ends every session signed in through it; the accounts stay, and sign in with their passwords. Idempotent: 204 whether or not it existed.',
  request: { params: AnyIdParam },
  responses: { 204: { description: 'Deleted, or already gone.' } },
});

const listIdentities = apiRoute({
  method: 'get',
  path: '/api/sso/identities',
  tags,
  summary: 'List linked identities',
  description:
    'Identities people linked from their Profile, newest first, cursor-paged; optionally of one provider or one account.',
  request: { query: IdentityQuery },
  responses: { 200: jsonAnswer(pageOf(SsoIdentity), 'A page of linked identities.') },
});

const deleteIdentity = apiRoute({
  method: 'delete',
  path: '/api/sso/identities/{id}',
  tags,
  summary: 'Remove a linked identity',
  description:
    'Unlinks the identity; the account stays and can link again from its Profile. Idempotent: 204 whether or not it existed.',
  request: { params: AnyIdParam },
  responses: { 204: { description: 'Removed, or already gone.' } },
});

/** The single sign-on routes under /api/sso (admin only). */
export function ssoApiRoutes(deps: Deps) {
  const app = apiApp();
  const origin = (c: Ctx) => externalOrigin(c, deps.config);

  app.openapi(listProviders, async (c) => {
    return c.json({ items: (await providerDetails(deps)).map((p) => presentProvider(p, origin(c))) }, 200);
  });

  app.openapi(oneProvider, async (c) => {
    const [found] = await providerDetails(deps, c.req.valid('param').id);
    if (!found) return problem(c, 404, 'not-found', NO_PROVIDER);
    return c.json(presentProvider(found, origin(c)), 200);
  });

  app.openapi(createProviderRoute, async (c) => {
    const { skip_discovery, ...input } = c.req.valid('json');
    const result = await createProvider(deps, { actorId: apiAccount(c).id }, input, {
      checkDiscovery: !skip_discovery,
    });
    if (!result.ok) return refuse(c, result);
    const [created] = await providerDetails(deps, result.id);
    // Deleted between the insert and this read: it is gone all the same.
    if (!created) return refuse(c, { ok: false, reason: 'not-found' });
    return c.json(presentProvider(created, origin(c)), 201, { Location: `/api/sso/providers/${result.id}` });
  });

  app.openapi(updateProvider, async (c) => {
    const { id } = c.req.valid('param');
    const { skip_discovery, ...change } = c.req.valid('json');
    const result = await changeProvider(
      deps,
      { actorId: apiAccount(c).id },
      { id, ...change },
      { checkDiscovery: !skip_discovery },
    );
    if (!result.ok) return refuse(c, result);
    const [changed] = await providerDetails(deps, id);
    if (!changed) return refuse(c, { ok: false, reason: 'not-found' });
    return c.json(presentProvider(changed, origin(c)), 200);
  });

  app.openapi(deleteProvider, async (c) => {
    const { id } = c.req.valid('param');
    const result = isId(id) ? await removeProvider(deps, { actorId: apiAccount(c).id }, id) : undefined;
    return result?.ok === false ? refuse(c, result) : c.body(null, 204);
  });

  app.openapi(listIdentities, async (c) => {
    const { cursor, limit, provider_id, account_id } = c.req.valid('query');
    const after = cursor === undefined ? undefined : timeIdCursor(cursor);
    if (after === null) return badCursor(c);
    const page = await identitiesPage(deps, {
      providerId: provider_id,
      accountId: account_id,
      after: after && { linkedAt: after.at, id: after.id },
      limit,
    });
    const next = page.next ? timeIdCursorOf(page.next.linkedAt, page.next.id) : null;
    return c.json({ items: page.items.map(presentIdentity), next_cursor: next }, 200);
  });

  app.openapi(deleteIdentity, async (c) => {
    const { id } = c.req.valid('param');
    const result = isId(id) ? await removeIdentity(deps, { actorId: apiAccount(c).id }, id) : undefined;
    return result?.ok === false ? refuse(c, result) : c.body(null, 204);
  });

  return app;
}

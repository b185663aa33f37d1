// The JSON API under /api/: every feature's API routes on one OpenAPIHono, and its OpenAPI 3.1 document, generated
// once on first request from the same zod schemas that validate the requests. app.ts loads this module on the first
// /api/ request and hands each request over after its own middleware (request log, security headers, body limit, the
// bearer token and the gate) has run; the token's account arrives in the bindings.
import { HTTPException } from 'hono/http-exception';
import type { Deps } from './deps.ts';
import { isDatabaseUnavailable } from './db/errors.ts';
import { apiApp, apiInput } from './http/api.ts';
import { routeTemplate } from './http/middleware.ts';
import { apiNotFound, problem } from './http/problem.ts';
import { databaseUnavailable } from './http/render.tsx';
import { accountsApiRoutes } from './features/team/accounts.api.routes.ts';
import { channelsApiRoutes } from './features/channels/channels.api.routes.ts';
import { deliveriesApiRoutes } from './features/delivery/deliveries.api.routes.ts';
import { invitationsApiRoutes } from './features/team/invitations.api.routes.ts';
import { messagesApiRoutes } from './features/inbox/messages.api.routes.ts';
import { retentionApiRoutes } from './features/messages/retention.api.routes.ts';
import { ssoApiRoutes } from './features/sso/sso.api.routes.ts';
import { tokensApiRoutes } from './features/tokens/tokens.api.routes.ts';

/** The API application for `deps`; its `routes` list every operation (tests compare them with the document). */
export function createApi(deps: Deps) {
  const api = apiApp();
  api.use('/api/*', async (c, next) => {
    c.set('deps', deps);
    c.set('apiAccount', c.env.apiAccount);
    await next();
    // The route that answered, for the request log and metrics of app.ts (which only saw /api/*).
    c.env.route = routeTemplate(c);
  });
  api.use('/api/*', apiInput());
  api.route('/', tokensApiRoutes(deps));
  api.route('/', messagesApiRoutes(deps));
  api.route('/', channelsApiRoutes(deps));
  api.route('/', deliveriesApiRoutes(deps));
  api.route('/', accountsApiRoutes(deps));
  api.route('/', invitationsApiRoutes(deps));
  api.route('/', ssoApiRoutes(deps));
  api.route('/', retentionApiRoutes(deps));
  api.openAPIRegistry.registerComponent('securitySchemes', 'token', {
    type: 'http',
    scheme: 'bearer',
    description: 'A personal API token (svc_pat_…), minted on the Profile page.',
  });
  let document: string | undefined;
  api.get('/api/openapi.json', (c) => {
    document ??= JSON.stringify(
      api.getOpenAPI31Document({
        openapi: '3.1.0',
        info: {
          title: 'svc',
          version: '1',
          description: 'The JSON API of svc: everything the console does, over personal API tokens. See docs/api.md.',
        },
      }),
    );
    return c.body(document, 200, { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' });
  });
  api.notFound((c) => apiNotFound(c, api.routes));
  api.onError((err, c) => {
    // The validators' own refusals (an empty or broken JSON body, another media type) are the client's, not ours.
    if (err instanceof HTTPException && err.status < 500) {
      return err.status === 415
        ? problem(c, 415, 'unsupported-media-type', 'Send the body as application/json.')
        : problem(c, 400, 'malformed-json', 'The body is not valid JSON.');
    }
    if (isDatabaseUnavailable(err)) return databaseUnavailable(c, deps.log, err);
    deps.log.error({ err, path: c.req.path, method: c.req.method }, 'request failed');
    return problem(c, 500, 'internal', 'The service could not complete this request. It has been logged.');
  });
  return api;
}

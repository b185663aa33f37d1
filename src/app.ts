// Builds the web application: the page path's middleware, one app.use per step in order, then every feature's routes.
import fs from 'node:fs';
import { Hono } from 'hono';
import type { Deps } from './deps.ts';
import type { AppEnv } from './http/env.ts';
import { enforceGate, formAndCsrf, limitBody, loadApiAccount, loadSession, requestLog, securityHeaders } from './http/middleware.ts';
import { errorPage } from './http/render.tsx';
import { apiNotFound, apiApp, jsonOnly, problem } from './http/api.ts';
import { isApiPath } from './http/gate.ts';
import { loginRoutes } from './features/auth/login.routes.tsx';
import { deliveryRoutes } from './features/delivery/delivery.routes.tsx';
import { channelsRoutes } from './features/channels/channels.routes.tsx';
import { homeRoutes } from './features/home/home.routes.tsx';
import { inboxRoutes } from './features/messages/inbox.routes.tsx';
import { secondFactorRoutes } from './features/auth/second-factor.routes.tsx';
import { profileRoutes } from './features/profile/profile.routes.tsx';
import { tokensApiRoutes } from './features/tokens/tokens.api.routes.ts';
import { messagesApiRoutes } from './features/messages/messages.api.routes.ts';
import { retentionApiRoutes } from './features/messages/retention.api.routes.ts';
import { channelsApiRoutes } from './features/channels/channels.api.routes.ts';
import { deliveriesApiRoutes } from './features/delivery/deliveries.api.routes.ts';
import { accountsApiRoutes } from './features/team/accounts.api.routes.ts';
import { invitationsApiRoutes } from './features/team/invitations.api.routes.ts';
import { ssoApiRoutes } from './features/sso/sso.api.routes.ts';
import { tokensRoutes } from './features/tokens/tokens.routes.tsx';
import { settingsRoutes } from './features/settings/settings.routes.tsx';
import { setupRoutes } from './features/setup/setup.routes.tsx';
import { inviteRoutes } from './features/team/invite.routes.tsx';
import { teamRoutes } from './features/team/team.routes.tsx';
import { accountRoutes } from './features/team/account.routes.tsx';
import { resetRoutes } from './features/reset/reset.routes.tsx';
import { ssoAdminRoutes } from './features/sso/sso.admin.routes.tsx';
import { ssoRoutes } from './features/sso/sso.routes.tsx';
import { attachMetrics } from './features/ops/metrics.service.ts';
import { opsRoutes } from './features/ops/ops.routes.ts';

/** Largest request body accepted anywhere; forms are far smaller. */
const BODY_LIMIT_BYTES = 64 * 1024;

const stylesheet = fs.readFileSync(new URL('../static/app.css', import.meta.url), 'utf8');

/** The whole web application for the given dependencies. */
export function createApp(deps: Deps) {
  const app = new Hono<AppEnv>();
  // Prometheus metrics only when SVC_METRICS_TOKEN is set; they become deps.metrics, shared with this process's worker.
  const metrics = deps.config.metricsToken ? attachMetrics(deps) : undefined;

  app.use(requestLog(deps));
  app.use(async (c, next) => {
    c.set('deps', deps);
    await next();
  });
  app.use(securityHeaders(deps.config.secureCookies));
  app.use(limitBody(BODY_LIMIT_BYTES));
  app.use(loadSession(deps));
  app.use(loadApiAccount(deps));
  app.use(enforceGate());
  app.use(formAndCsrf(deps));

  app.get('/static/app.css', (c) => {
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body(stylesheet, 200, { 'Content-Type': 'text/css; charset=utf-8' });
  });
  app.get('/healthz', (c) => c.text('ok'));
  app.route('/', opsRoutes(deps, metrics));

  app.route('/', setupRoutes(deps));
  app.route('/', loginRoutes(deps));
  app.route('/', homeRoutes(deps));
  app.route('/', settingsRoutes(deps));
  app.route('/', teamRoutes(deps));
  app.route('/', accountRoutes(deps));
  app.route('/', resetRoutes(deps));
  app.route('/', inviteRoutes(deps));
  app.route('/', deliveryRoutes(deps));
  app.route('/', inboxRoutes(deps));
  app.route('/', channelsRoutes(deps));
  app.route('/', secondFactorRoutes(deps));
  app.route('/', profileRoutes(deps));
  app.route('/', tokensRoutes(deps));
  app.route('/', createApi(deps));
  app.route('/', ssoRoutes(deps));
  app.route('/', ssoAdminRoutes(deps));

  app.notFound((c) => (isApiPath(c.req.path) ? apiNotFound(c, app.routes) : errorPage(c, 404, 'Not found', 'There is nothing at this address.')));
  app.onError((err, c) => {
    deps.log.error({ err, path: c.req.path, method: c.req.method }, 'request failed');
    if (isApiPath(c.req.path)) return problem(c, 500, 'internal', 'The service could not complete this request. It has been logged.');
    return errorPage(c, 500, 'Something went wrong', 'The service could not complete this request. It has been logged.');
  });

  return app;
}

/**
 * The JSON API under /api/ (bearer tokens; the gate in app.use above has already authenticated and authorised): every
 * feature's API routes on one OpenAPIHono, whose OpenAPI 3.1 document is generated once, on first request, from the
 * same zod schemas that validate the requests.
 */
function createApi(deps: Deps) {
  const api = apiApp();
  api.use('/api/*', jsonOnly());
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
        info: { title: 'svc', version: '1', description: 'The JSON API of svc: everything the console does, over personal API tokens. See docs/api.md.' },
      }),
    );
    return c.body(document, 200, { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' });
  });
  return api;
}

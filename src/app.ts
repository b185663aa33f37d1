// Builds the web application: the page path's middleware, one app.use per step in order, then every feature's routes.
import fs from 'node:fs';
import { Hono } from 'hono';
import type { Deps } from './deps.ts';
import type { AppEnv } from './http/env.ts';
import {
  classifyAccess,
  enforceGate,
  formAndCsrf,
  limitBody,
  loadApiAccount,
  loadSession,
  requestLog,
  securityHeaders,
} from './http/middleware.ts';
import { loadCeremonyScript } from './http/ceremony.tsx';
import { databaseUnavailable, errorPage } from './http/render.tsx';
import { isDatabaseUnavailable } from './db/errors.ts';
import { apiNotFound, problem } from './http/problem.ts';
import { API_MOUNT, isApiPath } from './http/gate.ts';
import type { Handler } from 'hono';
import { loginRoutes } from './features/auth/login.routes.tsx';
import { resolveSession } from './features/auth/sessions.service.ts';
import { unreadCount } from './features/messages/read-state.service.ts';
import { authenticateBearer } from './features/tokens/tokens.service.ts';
import { deliveryRoutes } from './features/delivery/delivery.routes.tsx';
import { channelsRoutes } from './features/channels/channels.routes.tsx';
import { homeRoutes } from './features/home/home.routes.tsx';
import { inboxRoutes } from './features/inbox/inbox.routes.tsx';
import { secondFactorRoutes } from './features/second-factor/second-factor.routes.tsx';
import { passkeyRoutes } from './features/second-factor/passkeys.routes.tsx';
import { passkeySignIn } from './features/second-factor/passkeys.sign-in.ts';
import { owesSecondFactor } from './features/second-factor/second-factor.service.ts';
import { renderProfile } from './features/profile/profile.page.tsx';
import { profileRoutes } from './features/profile/profile.routes.tsx';
import { tokensRoutes } from './features/tokens/tokens.routes.tsx';
import { settingsRoutes } from './features/settings/settings.routes.tsx';
import { renderSettings } from './features/settings/settings.views.tsx';
import { setupRoutes } from './features/setup/setup.routes.tsx';
import { setupOpen } from './features/setup/setup.service.ts';
import { inviteRoutes } from './features/team/invite.routes.tsx';
import { teamRoutes } from './features/team/team.routes.tsx';
import { accountRoutes } from './features/team/account.routes.tsx';
import { resetRoutes } from './features/reset/reset.routes.tsx';
import { ssoAdminRoutes } from './features/sso/sso.admin.routes.tsx';
import { ssoSignInButtons } from './features/sso/sso.login.tsx';
import { ssoRoutes } from './features/sso/sso.routes.tsx';
import { ssoLogoutRoutes } from './features/sso/sso.logout.routes.tsx';
import { ssoSignOutOnward } from './features/sso/sso.logout.onward.ts';
import { attachMetrics } from './features/ops/metrics.service.ts';
import { opsRoutes } from './features/ops/ops.routes.ts';

/** Largest request body accepted anywhere; forms are far smaller. */
const BODY_LIMIT_BYTES = 64 * 1024;

const stylesheet = fs.readFileSync(new URL('../static/app.css', import.meta.url), 'utf8');
/** The one script svc serves: the WebAuthn ceremony, on the pages that run one (src/http/ceremony.tsx). */
const ceremonyScript = loadCeremonyScript(new URL('../static/passkeys.js', import.meta.url));

/** The whole web application for the given dependencies. */
export function createApp(deps: Deps) {
  const app = new Hono<AppEnv>();
  // Prometheus metrics only when SVC_METRICS_TOKEN is set; they become deps.metrics, shared with this process's worker.
  const metrics = deps.config.metricsToken ? attachMetrics(deps) : undefined;

  app.use(requestLog(deps));
  app.use(async (c, next) => {
    c.set('deps', deps);
    // The bell's unread count, asked for by render() only when it draws the layout for a fully signed-in viewer.
    c.set('unreadCount', (accountId) => unreadCount(deps, accountId));
    c.set('ceremonyScript', ceremonyScript);
    await next();
  });
  app.use(classifyAccess());
  app.use(securityHeaders(deps.config.secureCookies));
  app.use(limitBody(BODY_LIMIT_BYTES));
  app.use(loadSession(deps, resolveSession));
  app.use(loadApiAccount(deps, authenticateBearer));
  app.use(enforceGate());
  app.use(formAndCsrf(deps));

  app.get('/static/app.css', (c) => {
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body(stylesheet, 200, { 'Content-Type': 'text/css; charset=utf-8' });
  });
  // Named by its content, so it can be cached for a year: a new build is a new path.
  app.get(ceremonyScript.href, (c) => {
    c.header('Cache-Control', 'public, max-age=31536000, immutable');
    return c.body(ceremonyScript.body, 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
  });
  app.get('/healthz', (c) => c.text('ok'));
  app.route('/', opsRoutes(deps, metrics));

  app.route('/', setupRoutes(deps));
  app.route(
    '/',
    loginRoutes(deps, {
      setupPending: setupOpen,
      otherWaysIn: ssoSignInButtons,
      signOutOnward: ssoSignOutOnward,
      owesSecondFactor,
      passkey: passkeySignIn,
    }),
  );
  app.route('/', homeRoutes(deps));
  app.route('/', settingsRoutes(deps));
  app.route('/', teamRoutes(deps, renderSettings));
  app.route('/', accountRoutes(deps, renderSettings));
  app.route('/', resetRoutes(deps));
  app.route('/', inviteRoutes(deps));
  app.route('/', deliveryRoutes(deps, renderSettings));
  app.route('/', inboxRoutes(deps));
  app.route('/', channelsRoutes(deps, renderSettings));
  app.route('/', secondFactorRoutes(deps));
  app.route('/', passkeyRoutes(deps, renderProfile));
  app.route('/', profileRoutes(deps));
  app.route('/', tokensRoutes(deps, renderProfile));
  app.all(API_MOUNT, lazyApi(deps));
  app.route('/', ssoRoutes(deps, renderProfile));
  app.route('/', ssoLogoutRoutes(deps));
  app.route('/', ssoAdminRoutes(deps, renderSettings));

  app.notFound((c) =>
    isApiPath(c.req.path)
      ? apiNotFound(c, app.routes)
      : errorPage(c, 404, 'Not found', 'There is nothing at this address.'),
  );
  app.onError((err, c) => {
    if (isDatabaseUnavailable(err)) return databaseUnavailable(c, deps.log, err);
    deps.log.error({ err, path: c.req.path, method: c.req.method }, 'request failed');
    if (isApiPath(c.req.path))
      return problem(c, 500, 'internal', 'The service could not complete this request. It has been logged.');
    return errorPage(
      c,
      500,
      'Something went wrong',
      'The service could not complete this request. It has been logged.',
    );
  });

  return app;
}

/**
 * The JSON API (src/api.ts), built on the first /api/ request rather than at start-up: its OpenAPI machinery and
 * schemas cost about 10 MB that an install not using the API never pays (the idle memory budget, README "Design").
 * The gate above has already authenticated and authorised the request; the account and the route that answered
 * travel in the bindings.
 */
function lazyApi(deps: Deps): Handler<AppEnv> {
  let api: Promise<{ fetch: (req: Request, env: AppEnv['Bindings']) => Response | Promise<Response> }> | undefined;
  return async (c) => {
    api ??= import('./api.ts')
      .then((m) => m.createApi(deps))
      .catch((err: unknown) => {
        api = undefined;
        throw err;
      });
    const env: AppEnv['Bindings'] = { ...c.env, apiAccount: c.get('apiAccount') };
    const res = await (await api).fetch(c.req.raw, env);
    if (env.route) c.set('route', env.route);
    return res;
  };
}

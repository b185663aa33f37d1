// The Hono environment: what middleware puts on the context for handlers.
import type { Context } from 'hono';
import type { Deps } from '../deps.ts';
import type { SessionContext } from '../features/auth/sessions.service.ts';
import type { ApiAccount } from '../features/tokens/tokens.service.ts';

/** Per-request variables set by the middleware chain. */
export type AppEnv = {
  Variables: {
    /** The service's dependencies, for helpers such as render() that need the database. */
    deps: Deps;
    /** The caller's session, when the cookie names a live one (any stage). */
    session: SessionContext | undefined;
    /** The parsed form of a POST (urlencoded, valid UTF-8), set by the form middleware. */
    form: URLSearchParams;
    /** Account acting through a bearer token on /api/. */
    apiAccount: ApiAccount | undefined;
    /** The route template that answered, when a nested app (the API) knows it better than this app's router. */
    route: string | undefined;
  };
  Bindings: {
    incoming?: { socket?: { remoteAddress?: string } };
    /** Handed to the lazily loaded API app (src/api.ts): the account the gate authenticated. */
    apiAccount?: ApiAccount;
    /** Set by the API app: the template of the route that answered, for app.ts's request log. */
    route?: string;
  };
};

export type Ctx = Context<AppEnv>;

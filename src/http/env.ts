// The Hono environment: what middleware puts on the context for handlers. The session and the API caller are described
// here as the web layer reads them; the auth and tokens features produce them (their resolveSession and
// authenticateBearer, wired in by app.ts, where the compiler checks that the shapes agree).
import type { Context } from 'hono';
import type { Selectable } from 'kysely';
import type { AccountsTable, SessionsTable } from '../db/schema.ts';
import type { Deps } from '../deps.ts';

/** How far a session has signed in: fully, owing its second factor, or offered enrolment. */
export type Stage = SessionsTable['stage'];

/** The session and its account as read together on every request. */
export interface SessionContext {
  idHash: string;
  /** Non-secret id shown in the owner's session list. */
  publicId: string;
  stage: Stage;
  csrfToken: string;
  account: Pick<Selectable<AccountsTable>, 'id' | 'username' | 'role' | 'totp_enabled'>;
}

/** The account acting through a personal API token on /api/, its role read from the account row on this request. */
export interface ApiAccount {
  id: string;
  username: string;
  role: 'admin' | 'viewer';
  /** The token that authenticated this request. */
  tokenId: string;
  /** The token was minted read-only: every write through it is refused. */
  readOnly: boolean;
}

/** Per-request variables set by the middleware chain. */
export type AppEnv = {
  Variables: {
    /** The service's dependencies, for helpers that need the database. */
    deps: Deps;
    /**
     * The signed-in account's unread count for the layout's bell (the messages feature's, set in app.ts). render()
     * calls it only when it draws the layout for a fully signed-in viewer, so other answers never query it.
     */
    unreadCount: ((accountId: string) => Promise<number>) | undefined;
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

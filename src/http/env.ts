// The Hono environment: what middleware puts on the context for handlers, and the two readers that hand a handler the
// session with the gate's guarantee (signedIn, inSession) instead of a `!` at every use. The session and the API caller
// are described here as the web layer reads them; the auth and tokens features produce them (their resolveSession and
// authenticateBearer, wired in by app.ts, where the compiler checks that the shapes agree).
import type { Context } from 'hono';
import type { Selectable } from 'kysely';
import type { AccountsTable, SessionsTable } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import type { CeremonyScript } from './ceremony.tsx';
import type { Access } from './gate.ts';

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
    /** The built WebAuthn ceremony script (app.ts reads it once), for render() on the pages that run a ceremony. */
    ceremonyScript: CeremonyScript | undefined;
    /** What the path requires (gate.ts), decided once by the first step of the chain; later steps read it here. */
    access: Access;
    /** The caller's session, when the cookie names a live one (any stage). */
    session: SessionContext | undefined;
    /** The parsed form of a POST (urlencoded, valid UTF-8), set by the form step; absent on GET and on /api/. */
    form: URLSearchParams | undefined;
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

/** A session past every sign-in step: what the gate lets through to a 'user' or 'admin' path. */
export type FullSession = SessionContext & { stage: 'full' };

/**
 * The fully signed-in session of a request on a path the gate keeps for signed-in users ('user' or 'admin'), where it
 * cannot be missing. Called anywhere else (a public path, a sign-in step, the API) it throws: that handler must read
 * `c.get('session')` and handle its absence, or its path must be moved into the gate's signed-in classes.
 */
export function signedIn(c: Ctx): FullSession {
  const access = c.get('access');
  const session = c.get('session');
  if (access !== 'user' && access !== 'admin')
    throw new Error(
      `signedIn() on ${c.req.method} ${c.req.path}, a '${access}' path: the gate does not promise a session there`,
    );
  if (session?.stage !== 'full')
    throw new Error(
      `signedIn() on ${c.req.method} ${c.req.path} found no full session: is the gate (enforceGate) installed?`,
    );
  return session as FullSession;
}

/**
 * The session, in any stage, of a request on a sign-in step ('pending' path: the second factor, enrolment, sign-out)
 * or any signed-in path. On a public path or the API it throws, as signedIn() does.
 */
export function inSession(c: Ctx): SessionContext {
  const access = c.get('access');
  const session = c.get('session');
  if (access !== 'pending' && access !== 'user' && access !== 'admin')
    throw new Error(
      `inSession() on ${c.req.method} ${c.req.path}, a '${access}' path: the gate does not promise a session there`,
    );
  if (!session)
    throw new Error(
      `inSession() on ${c.req.method} ${c.req.path} found no session: is the gate (enforceGate) installed?`,
    );
  return session;
}

/** The signed-in account as the actor of an admin act, which the act's domain function checks for itself. */
export function sessionActor(c: Ctx): { actorId: string } {
  return { actorId: signedIn(c).account.id };
}

// A real OpenID Provider (oidc-provider) in the test process, over HTTPS on 127.0.0.1 with a CA and server
// certificate generated at test time. Tests drive its login step programmatically (authorize()) or with a browser.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CompactSign, decodeJwt, importJWK, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';

/** The two clients every test IdP registers. */
export const PUBLIC_CLIENT_ID = 'svc-public';
export const CONFIDENTIAL_CLIENT_ID = 'svc-confidential';
export const CONFIDENTIAL_CLIENT_SECRET = 'confidential-client-secret-0123456789';

/** What the token endpoint saw, so tests can tell public from confidential exchanges. */
export interface TokenRequestRecord {
  clientId: string;
  /** The method the IdP authenticated the client with (it enforces the registered one). */
  authMethod: string;
  basicHeader: boolean;
  hadCodeVerifier: boolean;
}

/** Rewrites the next issued id_token's claims; `signWith: 'foreign'` signs it with a key the IdP never published. */
export type IdTokenTamper = (claims: Record<string, unknown>) => {
  claims: Record<string, unknown>;
  signWith?: 'current' | 'foreign';
  kid?: string;
};

export interface TestIdp {
  issuer: string;
  /** PEM file of the CA that signed the IdP's certificate (what SVC_OIDC_CA_FILE points at). */
  caFile: string;
  /** Claims per subject beyond sub (e-mail, name). */
  claims: Map<string, Record<string, unknown>>;
  tokenRequests: TokenRequestRecord[];
  /**
   * Every request the IdP received (method and path, e.g. `/.well-known/openid-configuration`, `/jwks`), oldest first.
   */
  requests: { method: string; path: string }[];
  /** How many times the discovery document was fetched so far. */
  discoveryCount(): number;
  /** Applies to the next token response only. */
  tamperNextIdToken(fn: IdTokenTamper): void;
  /** Replaces the signing key with a fresh one under a new kid (the old one is no longer published). */
  rotateKeys(): Promise<void>;
  currentKid(): string;
  /**
   * Plays the browser at the IdP: follows the authorization URL, signs in as `sub` (or cancels) when the IdP asks,
   * returns the callback URL. Each call starts with no IdP session unless `keepSession`: then the session the previous
   * call left at the IdP is reused, and the IdP asks nothing (so `sub` goes unused) unless the request demands it.
   */
  authorize(authorizationUrl: string, sub: string, opts?: { cancel?: boolean; keepSession?: boolean }): Promise<URL>;
  /** The prompts (`login`, `consent`...) and their reasons of every interaction the IdP started, oldest first. */
  interactions: { prompt: string; reasons: string[] }[];
  /**
   * Plays the browser at the IdP's end-session endpoint: opens `url` (an end-session URL svc built, or the bare
   * endpoint for a sign-out started at the IdP) with the session the last authorize() left, says "Yes, sign me out",
   * and returns where the IdP sends the browser next. The IdP posts its back-channel logout tokens before it answers.
   */
  endSession(url?: string): Promise<URL>;
  /** The back-channel logouts the IdP made (client, and the error when svc did not answer 200), oldest first. */
  backchannelLogouts: { clientId: string; error?: string }[];
  /** The private key the IdP signs with now (as a JWK with its kid), for tests that sign their own logout tokens. */
  signingKey(): JWK;
  /**
   * Makes every request to the path `at` (e.g. `/jwks`) answer `status` with a body that is not JSON, as a failing
   * provider does, until called again without a status. The request is still recorded in `requests`.
   */
  failPath(at: string, status?: number): void;
  /**
   * With `literalBasicClient`: the user names of the Basic headers its token endpoint refused, exactly as they were
   * sent (after base64, before any form decoding), oldest first.
   */
  literalBasicRefused: string[];
  close(): Promise<void>;
}

/** The logout features a test turns on at the IdP (RP-initiated logout stays on unless `endSession` is false). */
export interface IdpLogoutOptions {
  /** Whether the discovery document names an end-session endpoint (default true). */
  endSession?: boolean;
  /** Registered for both clients: where the IdP may send the browser back after signing out. */
  postLogoutRedirectUris?: string[];
  /** Registered for both clients: where the IdP posts logout tokens (turns Back-Channel Logout on). */
  backchannelLogoutUri?: string;
  /** Whether the clients ask for `sid` in id_tokens and logout tokens (backchannel_logout_session_required). */
  sessionRequired?: boolean;
}

/**
 * A client whose token endpoint reads an HTTP Basic header the way Glewlwyd does: base64-decoded but not form-decoded,
 * although RFC 6749 2.3.1 has the client form-encode its id and secret first (openid-client sends `-` as `%2D`). A
 * header whose literal id or secret differs is answered `refuse` (default: 403 unauthorized_client, as Glewlwyd does)
 * before the IdP sees it; credentials in the body reach the IdP, where the client is registered for client_secret_post.
 */
export interface LiteralBasicClient {
  clientId: string;
  clientSecret: string;
  refuse?: { status: 400 | 401 | 403; error: 'invalid_client' | 'unauthorized_client' };
}

interface SigningKey {
  kid: string;
  jwk: JWK;
}

function newSigningKey(): SigningKey {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomBytes(8).toString('hex');
  return { kid, jwk: { ...(privateKey.export({ format: 'jwk' }) as JWK), kid, alg: 'RS256', use: 'sig' } };
}

/** A throwaway CA and a server certificate for 127.0.0.1 and localhost, made with the openssl CLI. */
export function makeCertificates(dir: string): { caFile: string; keyFile: string; certFile: string } {
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=svc test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  ssl('req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(
    f('server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
  );
  return { caFile: f('ca.pem'), keyFile: f('server.key'), certFile: f('server.pem') };
}

/**
 * Starts the IdP; `redirectUris` are registered for both clients. Pass `certs` (from makeCertificates) when the
 * service's config must name the CA file before the IdP can start (e.g. a served app whose port decides the URIs).
 */
export async function startTestIdp(opts: {
  redirectUris: string[];
  certs?: ReturnType<typeof makeCertificates>;
  logout?: IdpLogoutOptions;
  literalBasicClient?: LiteralBasicClient;
}): Promise<TestIdp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-idp-'));
  const certs = opts.certs ?? makeCertificates(dir);
  const agent = new Agent({ connect: { ca: fs.readFileSync(certs.caFile, 'utf8') } });
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = https.createServer(
    { key: fs.readFileSync(certs.keyFile), cert: fs.readFileSync(certs.certFile) },
    (req, res) => handler(req, res),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const claims = new Map<string, Record<string, unknown>>();
  const tokenRequests: TokenRequestRecord[] = [];
  const requests: TestIdp['requests'] = [];
  const interactions: TestIdp['interactions'] = [];
  const backchannelLogouts: TestIdp['backchannelLogouts'] = [];
  const logout = opts.logout ?? {};
  const logoutMetadata = {
    ...(logout.postLogoutRedirectUris ? { post_logout_redirect_uris: logout.postLogoutRedirectUris } : {}),
    ...(logout.backchannelLogoutUri
      ? {
          backchannel_logout_uri: logout.backchannelLogoutUri,
          backchannel_logout_session_required: logout.sessionRequired ?? true,
        }
      : {}),
  };
  let tamper: IdTokenTamper | undefined;
  let key = newSigningKey();
  const foreign = newSigningKey();
  const cookieKeys = [crypto.randomBytes(32).toString('hex')];
  const literal = opts.literalBasicClient;
  const literalBasicRefused: string[] = [];

  /** The Glewlwyd-like check of LiteralBasicClient: true when it answered the request itself. */
  function refusedLiteralBasic(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    const basic = /^Basic +(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!literal || req.method !== 'POST' || pathname !== '/token' || !basic) return false;
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const [id, secret] = colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    // Only this client's requests (its id as sent, or form-decoded); the IdP's other clients are not affected.
    let formDecoded = id;
    try {
      formDecoded = decodeURIComponent(id.replace(/\+/g, ' '));
    } catch {}
    if (id !== literal.clientId && formDecoded !== literal.clientId) return false;
    if (id === literal.clientId && secret === literal.clientSecret) return false;
    literalBasicRefused.push(id);
    const refuse = literal.refuse ?? { status: 403, error: 'unauthorized_client' };
    res.statusCode = refuse.status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: refuse.error, error_description: 'Invalid client credentials' }));
    return true;
  }

  function buildProvider(): Provider {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: PUBLIC_CLIENT_ID,
          token_endpoint_auth_method: 'none',
          redirect_uris: opts.redirectUris,
          response_types: ['code'],
          grant_types: ['authorization_code'],
          ...logoutMetadata,
        },
        {
          client_id: CONFIDENTIAL_CLIENT_ID,
          client_secret: CONFIDENTIAL_CLIENT_SECRET,
          token_endpoint_auth_method: 'client_secret_basic',
          redirect_uris: opts.redirectUris,
          response_types: ['code'],
          grant_types: ['authorization_code'],
          ...logoutMetadata,
        },
        ...(literal
          ? [
              {
                client_id: literal.clientId,
                client_secret: literal.clientSecret,
                token_endpoint_auth_method: 'client_secret_post',
                redirect_uris: opts.redirectUris,
                response_types: ['code'],
                grant_types: ['authorization_code'],
              },
            ]
          : []),
      ],
      jwks: { keys: [key.jwk] },
      cookies: { keys: cookieKeys },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
      // Put scope claims into the id_token itself, as many real providers do.
      conformIdTokenClaims: false,
      features: {
        devInteractions: { enabled: false },
        // Its own pages, without the default ones' web font: tests send nothing off this machine.
        rpInitiatedLogout: {
          enabled: logout.endSession ?? true,
          logoutSource: async (ctx: any, form: string) => {
            ctx.body = `<!doctype html><html><head><title>Test IdP sign-out</title></head><body><h1>Sign out of the test IdP?</h1>${form}<button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button></body></html>`;
          },
          postLogoutSuccessSource: async (ctx: any) => {
            ctx.body =
              '<!doctype html><html><head><title>Signed out</title></head><body>Signed out of the test IdP.</body></html>';
          },
        },
        backchannelLogout: { enabled: logout.backchannelLogoutUri !== undefined },
      },
      // oidc-provider refuses to post to loopback addresses; svc under test listens on one.
      fetch: (url: string | URL, options: RequestInit & { dispatcher?: unknown }) => {
        const { dispatcher: _refusesLoopback, ...rest } = options;
        return fetch(url, rest);
      },
      ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      findAccount: async (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: async () => ({ sub, ...claims.get(sub) }),
      }),
      // Every client is first-party here: grant whatever openid scopes were asked for, no consent screen.
      loadExistingGrant: async (ctx: any) => {
        const grant = new ctx.oidc.provider.Grant({
          clientId: ctx.oidc.client.clientId,
          accountId: ctx.oidc.session.accountId,
        });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
      renderError: async (ctx: any, out: Record<string, string>) => {
        ctx.type = 'text/plain';
        ctx.body = `IdP error: ${out.error}: ${out.error_description ?? ''}`;
      },
    });
    provider.on('backchannel.success', (_ctx: unknown, client: { clientId: string }) => {
      backchannelLogouts.push({ clientId: client.clientId });
    });
    provider.on('backchannel.error', (_ctx: unknown, err: Error, client: { clientId: string }) => {
      backchannelLogouts.push({ clientId: client.clientId, error: err.message });
    });
    provider.on('interaction.started', (_ctx: unknown, prompt: { name: string; reasons: string[] }) => {
      interactions.push({ prompt: prompt.name, reasons: [...prompt.reasons] });
    });
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.path !== '/token' || ctx.method !== 'POST') return;
      const oidcCtx = ctx.oidc ?? {};
      tokenRequests.push({
        clientId: oidcCtx.client?.clientId ?? '',
        authMethod: oidcCtx.client?.clientAuthMethod ?? '',
        basicHeader: /^Basic /.test((ctx as any).headers?.authorization ?? ''),
        hadCodeVerifier: typeof oidcCtx.params?.code_verifier === 'string' && oidcCtx.params.code_verifier.length > 0,
      });
      if (ctx.status !== 200 || !ctx.body?.id_token || !tamper) return;
      const change = tamper;
      tamper = undefined;
      const out = change({ ...decodeJwt(ctx.body.id_token) });
      const privateKey = await importJWK(out.signWith === 'foreign' ? foreign.jwk : key.jwk, 'RS256');
      ctx.body = {
        ...ctx.body,
        // The published kid unless told otherwise, so a foreign token differs only in its signature.
        id_token: await new CompactSign(new TextEncoder().encode(JSON.stringify(out.claims)))
          .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: out.kid ?? key.kid })
          .sign(privateKey),
      };
    });
    return provider;
  }

  let provider = buildProvider();
  const failing = new Map<string, number>();
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    requests.push({ method: req.method ?? '', path: url.pathname });
    const failStatus = failing.get(url.pathname);
    if (failStatus !== undefined) {
      res.statusCode = failStatus;
      res.setHeader('content-type', 'text/plain');
      res.end('the test IdP is failing on purpose');
      return;
    }
    if (refusedLiteralBasic(req, res, url.pathname)) return;
    const match = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    if (match) {
      void interaction(provider, req, res).catch((err) => {
        res.statusCode = 400;
        res.end(`interaction failed: ${String(err)}`);
      });
      return;
    }
    provider.callback()(req, res);
  };
  handler = serve;

  const jar = new Map<string, string>();
  async function idpFetch(url: string, init: { method?: string; body?: string } = {}) {
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (init.body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await undiciFetch(url, {
      method: init.method ?? 'GET',
      body: init.body,
      headers,
      redirect: 'manual',
      dispatcher: agent,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(pair!.slice(0, eq));
      else jar.set(pair!.slice(0, eq), value);
    }
    return { res, text: await res.text() };
  }

  /**
   * The page oidc-provider shows when someone signs in over another account's session at the IdP: it ends the old
   * session through a form a browser submits by script. Returns that form (action and hidden fields), if this is it.
   */
  function sessionSwitchForm(text: string, base: string): { action: string; fields: URLSearchParams } | undefined {
    const form = /<form method="post" action="([^"]+)"/.exec(text);
    if (!form || new URL(form[1]!, base).pathname !== '/session/end/confirm') return undefined;
    const fields = new URLSearchParams();
    for (const m of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g))
      fields.append(m[1]!, m[2]!);
    return { action: new URL(form[1]!, base).href, fields };
  }

  return {
    issuer,
    caFile: certs.caFile,
    claims,
    tokenRequests,
    requests,
    discoveryCount: () => requests.filter((r) => r.path === '/.well-known/openid-configuration').length,
    interactions,
    literalBasicRefused,
    tamperNextIdToken: (fn) => {
      tamper = fn;
    },
    rotateKeys: async () => {
      key = newSigningKey();
      provider = buildProvider();
    },
    currentKid: () => key.kid,
    backchannelLogouts,
    signingKey: () => key.jwk,
    failPath: (at, status) => {
      if (status === undefined) failing.delete(at);
      else failing.set(at, status);
    },
    endSession: async (url = `${issuer}/session/end`) => {
      const { res, text } = await idpFetch(url);
      if (res.status !== 200)
        throw new Error(`IdP answered ${res.status} at its end-session endpoint: ${text.slice(0, 200)}`);
      const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(text);
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(text);
      if (!action || !xsrf) throw new Error(`no sign-out form at the IdP: ${text.slice(0, 200)}`);
      const body = new URLSearchParams({ xsrf: xsrf[1]!, logout: 'yes' }).toString();
      const confirmed = await idpFetch(new URL(action[1]!, url).href, { method: 'POST', body });
      const location = confirmed.res.headers.get('location');
      if (!location) throw new Error(`IdP answered ${confirmed.res.status} to the sign-out without a redirect`);
      return new URL(location, url);
    },
    authorize: async (authorizationUrl, sub, o = {}) => {
      if (!o.keepSession) jar.clear();
      let url = authorizationUrl;
      for (let hop = 0; hop < 10; hop++) {
        const isInteraction = /^\/interaction\/[^/]+$/.test(new URL(url).pathname);
        let { res, text } = isInteraction
          ? await idpFetch(url, {
              method: 'POST',
              body: new URLSearchParams(o.cancel ? { cancel: '1' } : { sub }).toString(),
            })
          : await idpFetch(url);
        const switchForm = res.status === 200 ? sessionSwitchForm(text, url) : undefined;
        if (switchForm)
          ({ res, text } = await idpFetch(switchForm.action, { method: 'POST', body: switchForm.fields.toString() }));
        const location = res.headers.get('location');
        if (!location) throw new Error(`IdP answered ${res.status} at ${url} without a redirect`);
        const next = new URL(location, url);
        if (next.origin !== issuer) return next;
        url = next.href;
      }
      throw new Error('too many redirects at the IdP');
    },
    close: async () => {
      // Keep-alive connections (svc's outbound pool to the IdP) would hold close() open: cut them first.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await agent.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The IdP's own sign-in page: a Subject field (for browsers) and a Cancel button; POST finishes the interaction. */
async function interaction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET') {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><head><title>Test IdP sign-in</title></head><body><h1>Test IdP</h1>
<form method="post" action="/interaction/${details.uid}"><label for="sub">Subject</label> <input id="sub" name="sub" />
<button type="submit">Continue</button> <button type="submit" name="cancel" value="1">Cancel</button></form></body></html>`);
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  const result = form.get('cancel')
    ? { error: 'access_denied', error_description: 'End-User aborted interaction' }
    : { login: { accountId: form.get('sub') ?? '' } };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

/**
 * A bare HTTPS server (certificate from `certs`) answering every request with whatever JSON `document` holds at the
 * time: a provider whose discovery document is malformed.
 */
export async function serveDocument(
  certs: ReturnType<typeof makeCertificates>,
): Promise<{ url: string; document: { body: unknown }; close(): Promise<void> }> {
  const document: { body: unknown } = { body: {} };
  const server = https.createServer(
    { key: fs.readFileSync(certs.keyFile), cert: fs.readFileSync(certs.certFile) },
    (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(document.body));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    document,
    close: async () => {
      // Keep-alive connections (svc's outbound pool to the IdP) would hold close() open: cut them first.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

// The SSO round-trips: GET /login/sso/:slug(/callback), GET /profile/sso/:slug/link(/callback), POST
// /profile/sso/unlink.
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import { clearSessionCookie, writeSessionCookie } from '../../http/cookies.ts';
import { signedIn, type AppEnv, type Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { TOKEN_PAGE_REFERRER_POLICY } from '../../http/middleware.ts';
import { render } from '../../http/render.tsx';
import type { RenderProfile } from '../../http/views/profile.tsx';
import { clientAddress, externalOrigin, userAgent } from '../../http/request.ts';
import { queryHasControlCharacters } from '../../http/query.ts';
import { landingFor } from '../auth/landing.ts';
import { createSession, endSession, stageAfterFirstFactor } from '../auth/sessions.service.ts';
import { owesSecondFactor } from '../second-factor/second-factor.service.ts';
import { takeFlowCookie, writeFlowCookie } from './sso.cookie.ts';
import {
  accountForIdentity,
  finishFlow,
  linkIdentity,
  openSessionThrough,
  startFlow,
  unlinkOwnIdentity,
  type FlowKind,
} from './sso.flow.service.ts';
import { idSchema, SLUG_PATTERN } from './sso.schema.ts';

type Refusal =
  | Exclude<Awaited<ReturnType<typeof finishFlow>>, { ok: true }>['reason']
  | 'too-many-starts'
  | 'malformed'
  | 'unbound'
  | 'suspended'
  | 'bound-elsewhere'
  | 'account-has-other'
  | 'provider-changed'
  | 'cross-site';

/** Every refusal of a flow: status, title and a safe message (details are in the log). */
const REFUSALS: Record<Refusal, { status: ContentfulStatusCode; title: string; text: string }> = {
  'not-found': {
    status: 404,
    title: 'Unknown sign-in option',
    text: 'There is no single sign-on provider at this address.',
  },
  disabled: {
    status: 403,
    title: 'Sign-in option turned off',
    text: 'An administrator has turned this single sign-on provider off. Sign in with your password instead.',
  },
  expired: {
    status: 400,
    title: 'Sign-in expired',
    text: 'This sign-in attempt has expired or was already used. Start again.',
  },
  'already-used': {
    status: 400,
    title: 'Sign-in already used',
    text: 'This answer from the provider was already used to finish a sign-in, so it cannot be used again. Start again.',
  },
  'state-mismatch': {
    status: 400,
    title: 'Sign-in not recognised',
    text: 'This answer from the provider does not belong to the sign-in this browser started. Start again.',
  },
  unreachable: {
    status: 502,
    title: 'Provider unreachable',
    text: 'The single sign-on provider could not be reached. Try again later, or sign in with your password.',
  },
  'discovery-invalid': {
    status: 502,
    title: 'Provider misconfigured',
    text: 'The single sign-on provider’s configuration could not be used. An administrator can find the details in the service log.',
  },
  cancelled: {
    status: 400,
    title: 'Sign-in cancelled',
    text: 'Sign-in was cancelled at the provider. Nothing was changed.',
  },
  'provider-error': {
    status: 502,
    title: 'Provider refused',
    text: 'The single sign-on provider refused this sign-in. An administrator can find the details in the service log.',
  },
  'token-refused': {
    status: 502,
    title: 'Sign-in not completed',
    text: 'The provider did not accept this sign-in’s code (it may have been used already). Start again.',
  },
  // Not the person's doing, and starting again would not help: the words send the administrator to the settings.
  'client-refused': {
    status: 502,
    title: 'Provider refused svc',
    text: 'The provider refused svc’s client credentials, so nothing was signed in or linked. An administrator should check the client ID, secret and client authentication of this provider in Settings.',
  },
  'token-invalid': {
    status: 502,
    title: 'Identity not verified',
    text: 'The provider’s answer could not be verified, so nothing was signed in or linked. An administrator can find the details in the service log.',
  },
  'keys-changed': {
    status: 503,
    title: 'Try again',
    text: 'The provider has just changed its signing keys. Please try again.',
  },
  unbound: {
    status: 403,
    title: 'Identity not linked',
    text: 'This identity is not linked to any account here. Sign in with your password, then link it on your Profile.',
  },
  suspended: {
    status: 403,
    title: 'Account suspended',
    text: 'The account linked to this identity is suspended, so it cannot sign in. Ask an administrator to reactivate it.',
  },
  'bound-elsewhere': {
    status: 409,
    title: 'Identity already linked',
    text: 'This identity is already linked to another account, so it was not linked to yours.',
  },
  'account-has-other': {
    status: 409,
    title: 'Another identity is linked',
    text: 'Your account is already linked to a different identity at this provider. Unlink it first.',
  },
  'provider-changed': {
    status: 409,
    title: 'Provider changed',
    text: 'An administrator changed this single sign-on provider during the link, so nothing was linked. Start again.',
  },
  'too-many-starts': {
    status: 429,
    title: 'Too many sign-in attempts',
    text: 'Too many single sign-on attempts came from your network just now. Wait a minute, then start again.',
  },
  malformed: {
    status: 400,
    title: 'Sign-in not recognised',
    text: 'This sign-in link holds control characters, so it was refused. Nothing was changed. Start again.',
  },
  'cross-site': {
    status: 403,
    title: 'Link not started',
    text: 'Linking an identity can only be started from your Profile on this site, not from a link on another site. Nothing was changed. Use the Link button on your Profile.',
  },
};

/**
 * Whether the browser says this request came from our own pages (or the user typed or bookmarked it). Fetch metadata
 * absent means an older browser or a non-browser client; those keep working.
 */
function startedHere(c: Ctx): boolean {
  const site = c.req.header('sec-fetch-site');
  return site === undefined || site === 'same-origin' || site === 'none';
}

function refuse(c: Ctx, kind: FlowKind, reason: Refusal) {
  const r = REFUSALS[reason];
  const back =
    kind === 'login' ? { href: '/login', text: 'Back to sign-in' } : { href: '/profile', text: 'Back to your profile' };
  return render(
    c,
    r.title,
    <p class="lead">
      {r.text} <a href={back.href}>{back.text}</a>.
    </p>,
    r.status,
  );
}

/** The registered redirect_uri (external origin, never forwarded headers) with the provider's query appended. */
function callbackUrl(c: Ctx, deps: Deps, path: string): URL {
  const url = new URL(path, externalOrigin(c, deps.config));
  url.search = new URL(c.req.url).search;
  return url;
}

function paths(slug: string, kind: FlowKind): string {
  return kind === 'login' ? `/login/sso/${slug}/callback` : `/profile/sso/${slug}/link/callback`;
}

export function ssoRoutes(deps: Deps, renderProfile: RenderProfile) {
  const app = new Hono<AppEnv>();

  const start = async (c: Ctx, kind: FlowKind) => {
    const slug = c.req.param('slug') ?? '';
    if (queryHasControlCharacters(c.req.url)) return refuse(c, kind, 'malformed');
    if (!SLUG_PATTERN.test(slug)) return refuse(c, kind, 'not-found');
    const redirectUri = `${externalOrigin(c, deps.config)}${paths(slug, kind)}`;
    const who =
      kind === 'link'
        ? { kind, accountId: signedIn(c).account.id, sessionIdHash: signedIn(c).idHash }
        : { kind, address: clientAddress(c) };
    const started = await startFlow(deps, slug, who, redirectUri);
    // Not confirmed lately: back to the Profile's single sign-on section, which asks "Confirm it's you" first.
    if (!started.ok && started.reason === 'reauth-required')
      return c.redirect('/profile?notice=confirm-first-sso#profile-sso', 303);
    if (!started.ok && started.reason === 'too-many-starts') {
      c.header('Retry-After', String(Math.ceil(started.retryAfterMs / 1000)));
      return refuse(c, kind, started.reason);
    }
    if (!started.ok) return refuse(c, kind, started.reason);
    await writeFlowCookie(c, deps, started.flow);
    return c.redirect(started.url, 303);
  };

  const finish = async (c: Ctx, kind: FlowKind) => {
    // The provider's code and state sit in the URL: a refusal page's stylesheet and links must not send them onwards.
    c.header('Referrer-Policy', TOKEN_PAGE_REFERRER_POLICY);
    const slug = c.req.param('slug') ?? '';
    const flow = await takeFlowCookie(c, deps);
    // Refused before anything reads the query: the flow cookie is spent all the same.
    if (queryHasControlCharacters(c.req.url)) return refuse(c, kind, 'malformed');
    if (!SLUG_PATTERN.test(slug)) return refuse(c, kind, 'not-found');
    const accountId = kind === 'link' ? signedIn(c).account.id : undefined;
    return finishFlow(deps, slug, kind, flow, callbackUrl(c, deps, paths(slug, kind)), accountId);
  };

  app.get('/login/sso/:slug', (c) => start(c, 'login'));

  app.get('/login/sso/:slug/callback', async (c) => {
    const done = await finish(c, 'login');
    if (done instanceof Response) return done;
    if (!done.ok) return refuse(c, 'login', done.reason);
    const found = await accountForIdentity(deps, done.provider, done.identity.sub);
    if (!found.ok) {
      deps.log.info({ provider: done.provider.slug, reason: found.reason }, 'sso: sign-in refused');
      return refuse(c, 'login', found.reason);
    }
    const stage = stageAfterFirstFactor(found.account, await owesSecondFactor(deps, found.account));
    const { sub, sid, idToken } = done.identity;
    const origin = { providerId: done.provider.id, sub, sid, idToken };
    const opened = await openSessionThrough(deps, done.provider, sub, found.account.id, (inTransaction) =>
      createSession(inTransaction, found.account.id, stage, userAgent(c), undefined, origin),
    );
    if (!opened.ok) {
      deps.log.info({ provider: done.provider.slug, reason: opened.reason }, 'sso: sign-in refused');
      return refuse(c, 'login', opened.reason);
    }
    const previous = c.get('session');
    if (previous) await endSession(deps, previous.idHash);
    writeSessionCookie(c, deps.config, opened.cookie);
    return c.redirect(landingFor(stage), 303);
  });

  // Sign-in may start from anywhere (providers' portals link to it); a link binds an identity to the signed-in account,
  // so another site must not start one: the SameSite=Lax session cookie rides a cross-site top-level navigation.
  app.get('/profile/sso/:slug/link', (c) => {
    if (!startedHere(c)) {
      deps.log.warn({ site: c.req.header('sec-fetch-site') }, 'sso: link start from another site refused');
      return refuse(c, 'link', 'cross-site');
    }
    return start(c, 'link');
  });

  app.get('/profile/sso/:slug/link/callback', async (c) => {
    const done = await finish(c, 'link');
    if (done instanceof Response) return done;
    if (!done.ok) return refuse(c, 'link', done.reason);
    const linked = await linkIdentity(deps, signedIn(c).account.id, done.provider, done.identity);
    if (!linked.ok) return refuse(c, 'link', linked.reason);
    return c.redirect(`/profile?sso=${linked.already ? 'already' : 'linked'}#profile-sso`, 303);
  });

  app.post('/profile/sso/unlink', async (c) => {
    const form = parseForm(c, idSchema);
    // A malformed id (control characters, another alphabet) is refused before any lookup, beside the section.
    if (!form.ok)
      return renderProfile(
        deps,
        c,
        { section: 'sso', kind: 'error', message: form.errors.id ?? 'That identity no longer exists.' },
        400,
      );
    const { account, idHash } = signedIn(c);
    const { removed, endedCurrent } = await unlinkOwnIdentity(deps, account.id, form.data.id, idHash);
    if (endedCurrent) {
      clearSessionCookie(c, deps.config);
      return c.redirect('/login?notice=unlinked', 303);
    }
    return c.redirect(`/profile?sso=${removed ? 'unlinked' : 'unchanged'}#profile-sso`, 303);
  });

  return app;
}

// The SSO administration acts' refusals: the words the settings page shows (heading the tab or beside a field) and the
// JSON API gives as `detail` or in `errors`, and what the API answers with. A reason without words does not compile.
import { NOT_ADMIN, wordsOf, type Refusal } from '../refusals.ts';
import type { BackchannelRefusal } from './sso.backchannel.service.ts';
import type { DiscoveryProblem } from './sso.discovery-check.ts';
import type { ChangeProviderResult, ProviderWriteResult, RemoveResult, SecretResult } from './sso.providers.service.ts';
import type { SecretMethod } from './sso.schema.ts';

/** Why an issuer URL is refused at validation (the field rule both doors apply). */
export type IssuerReason = 'not-url' | 'not-https' | 'credentials' | 'well-known';

export const ISSUER_REFUSALS = {
  'not-url': {
    words: 'Enter the issuer as an absolute URL, such as https://idp.example.com.',
    status: 400,
    field: 'issuer',
  },
  'not-https': { words: 'The issuer URL must use https.', status: 400, field: 'issuer' },
  credentials: {
    words: 'The issuer URL cannot carry a user name, password, query or fragment.',
    status: 400,
    field: 'issuer',
  },
  'well-known': {
    words:
      'Enter the issuer itself, not its discovery document: leave out "/.well-known/…" (svc adds /.well-known/openid-configuration).',
    status: 400,
    field: 'issuer',
  },
} satisfies Record<IssuerReason, Refusal>;

/** Why a provider's discovery failed, in words that name the issuer tried. */
export const DISCOVERY_REFUSALS = {
  unreachable: {
    words: ({ issuer }) =>
      `svc could not reach ${issuer}: the host is unknown, refused the connection or did not answer in time.`,
    status: 422,
    field: 'issuer',
  },
  'untrusted-certificate': {
    words: ({ issuer }) =>
      `svc reached ${issuer} but does not trust its certificate. For a provider behind a private CA, set SVC_OIDC_CA_FILE.`,
    status: 422,
    field: 'issuer',
  },
  'not-https': {
    words:
      "The provider's discovery document lists endpoints that are not https; svc only talks to a provider over https.",
    status: 422,
    field: 'issuer',
  },
  'bad-document': {
    words: ({ issuer }) =>
      `The provider answered, but ${issuer}/.well-known/openid-configuration is not a usable discovery document.`,
    status: 422,
    field: 'issuer',
  },
  'issuer-mismatch': {
    words:
      'The discovery document names a different issuer: enter the issuer exactly as the provider states it (mind a trailing slash).',
    status: 422,
    field: 'issuer',
  },
} satisfies Record<DiscoveryProblem, Refusal<{ issuer: string }>>;

type ProviderReason = Extract<
  ProviderWriteResult | ChangeProviderResult | SecretResult | RemoveResult,
  { ok: false }
>['reason'];

/**
 * What a provider refusal's words may name: the discovery problem and the issuer tried (a failed discovery only); the
 * client authentication method chosen and those the provider lists (a method it does not list only).
 */
export interface ProviderFacts {
  problem?: DiscoveryProblem;
  issuer?: string;
  method?: SecretMethod;
  listed?: SecretMethod[];
}

export const PROVIDER_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': { words: 'That provider no longer exists.', status: 404, type: 'not-found' },
  'duplicate-slug': {
    words: 'Another provider already uses this slug. Choose a different one.',
    status: 409,
    type: 'duplicate-slug',
    field: 'slug',
  },
  undiscoverable: {
    words: ({ problem = 'unreachable', issuer = '' }) => wordsOf(DISCOVERY_REFUSALS[problem], { issuer }),
    status: 422,
    type: 'discovery-failed',
    field: 'issuer',
  },
  'client-auth-not-listed': {
    words: ({ method = 'client_secret_basic', listed = [] }) =>
      listed.length === 0
        ? "The provider's discovery document lists neither client_secret_basic nor client_secret_post for its token endpoint. Choose Automatic."
        : `The provider's discovery document does not list ${method} for its token endpoint; it lists ${listed.join(' and ')}. Choose Automatic or a method it lists.`,
    status: 422,
    type: 'client-auth-not-listed',
    field: 'client_auth_method',
  },
} satisfies Record<ProviderReason, Refusal<ProviderFacts>>;

/**
 * How the back-channel logout route answers a refusal: status, the OAuth error code and its description (JSON, for the
 * provider's logs). A token that fails a check is 400; keys svc could not fetch just now are 503, so a provider that
 * retries may try again.
 */
export interface BackchannelAnswer {
  status: 400 | 503;
  error: 'invalid_request' | 'temporarily_unavailable';
  words: string;
}

const invalid = (words: string): BackchannelAnswer => ({ status: 400, error: 'invalid_request', words });

export const BACKCHANNEL_REFUSALS = {
  'unknown-provider': invalid('There is no single sign-on provider at this address.'),
  disabled: invalid('This single sign-on provider is turned off, so its logout tokens are not accepted.'),
  'no-token': invalid('Send the logout token as the form field logout_token (application/x-www-form-urlencoded).'),
  unreadable: invalid('The logout token is not a readable signed JWT with string sub and sid claims.'),
  type: invalid("The logout token's type (typ) is neither JWT nor logout+jwt."),
  algorithm: invalid("The logout token is not signed with one of the provider's published asymmetric algorithms."),
  signature: invalid("The logout token's signature does not verify against the provider's published keys."),
  issuer: invalid("The logout token's issuer (iss) is not this provider's issuer."),
  audience: invalid("The logout token's audience (aud) is not this provider's client id."),
  stale: invalid('The logout token was issued too long ago, in the future, or has expired (iat, exp).'),
  'no-event': invalid('The logout token does not carry the back-channel logout event in its events claim.'),
  nonce: invalid('A logout token must not carry a nonce.'),
  'no-subject': invalid('The logout token names neither a subject (sub) nor a session (sid).'),
  'no-jti': invalid('The logout token has no token id (jti).'),
  replayed: invalid('This logout token (its jti) was already accepted.'),
  'keys-unavailable': {
    status: 503,
    error: 'temporarily_unavailable',
    words: "svc could not fetch the provider's discovery document or keys just now. Try again later.",
  },
} satisfies Record<BackchannelRefusal, BackchannelAnswer>;

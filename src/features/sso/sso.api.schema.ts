// The shapes of the single sign-on API: providers (the secret only as `has_secret`), linked identities, and the request
// bodies, whose field rules are the Settings forms' own (sso.schema.ts), so both doors refuse with the same words.
import { z } from '@hono/zod-openapi';
import { iso, Timestamp } from '../../http/api.ts';
import type { IdentityListing } from './sso.repo.ts';
import type { ProviderDetail } from './sso.providers.service.ts';
import { clientAuthMethod, clientSecretValue, providerFields, SECRET_METHODS, SLUG_PATTERN } from './sso.schema.ts';
import { backchannelLogoutUri, callbackUrls, postLogoutRedirectUri } from './sso.urls.ts';

/** A provider as the API shows it: never its client secret. */
export const SsoProvider = z
  .strictObject({
    id: z.string(),
    display_name: z.string().openapi({ description: 'The label of its sign-in button.' }),
    slug: z.string().openapi({ description: 'Its id in the sign-in and link URLs.', example: 'corp' }),
    issuer: z.string().openapi({ example: 'https://idp.example.com' }),
    client_id: z.string(),
    has_secret: z.boolean().openapi({
      description: 'Whether a client secret is stored (a confidential client); the secret itself is never shown.',
    }),
    enabled: z.boolean().openapi({
      description:
        'A disabled provider keeps its settings, shows no button and refuses its sign-in flow and its logout tokens. Disabling ends the sessions it opened.',
    }),
    client_auth_method: z.enum(['automatic', ...SECRET_METHODS]).openapi({
      description:
        "How svc sends the client secret to the token endpoint: `automatic` (the HTTP Basic header, then the request body once when the provider refuses the client's credentials), or only `client_secret_basic` or `client_secret_post`. A public client sends none.",
    }),
    client_auth_learned: z
      .strictObject({ method: z.enum(SECRET_METHODS), learned_at: Timestamp })
      .nullable()
      .openapi({
        description:
          'For `automatic`: the method the provider accepted after refusing the first one, used first from then on; null until then. Forgotten when the issuer, client id, secret or setting changes.',
      }),
    linked_identities: z.number().int().openapi({ description: 'How many identities are linked through it.' }),
    callback_urls: z.strictObject({ sign_in: z.string(), link: z.string() }).openapi({
      description: 'The two redirect URIs to register at the provider: sign-in, and linking from the Profile.',
    }),
    sign_out_at_provider: z.boolean().openapi({
      description:
        "Signing out of a session this provider opened also sends the browser to the provider's end-session endpoint (when its discovery names one).",
    }),
    logout_urls: z.strictObject({ post_logout_redirect: z.string(), backchannel: z.string() }).openapi({
      description:
        "What to register at the provider for signing out: the post-logout redirect URI (where the provider's end-session endpoint sends the browser back) and the back-channel logout URI (where it posts logout tokens).",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z
      .strictObject({ id: z.string(), username: z.string().nullable() })
      .openapi({ description: 'The account that declared it.' }),
  })
  .openapi('SsoProvider');

/** A linked identity: who signs in as which account through which provider. */
export const SsoIdentity = z
  .strictObject({
    id: z.string(),
    provider_id: z.string(),
    provider_slug: z.string(),
    provider_display_name: z.string(),
    sub: z.string().openapi({ description: "The provider's stable subject id, from a verified id_token." }),
    label: z.string().openapi({
      description: 'A display label taken from the id_token (e-mail, username or name); never used to match.',
    }),
    account_id: z.string(),
    username: z.string(),
    linked_at: Timestamp,
  })
  .openapi('SsoIdentity');

const skipDiscovery = z.boolean().optional().openapi({
  description:
    'Save even though discovery fails (the console\'s "Save anyway"): sign-in with the provider fails until svc can reach it. Default false.',
});

const signOutAtProvider = z.boolean().optional().openapi({
  description:
    'Sign out at the provider too: after signing out of a session this provider opened, the browser goes to its end-session endpoint. Default false.',
});

// The shared rules were built before zod-openapi loaded (the console loads them at start-up), so they carry their
// document notes through zod's own .meta(), which the generator reads too.
const fields = {
  display_name: providerFields.display_name.meta({ description: 'Up to 100 characters.', example: 'Corp SSO' }),
  slug: providerFields.slug.meta({
    description: 'Lowercase letters, digits and hyphens between them; unique; up to 64 characters.',
    pattern: SLUG_PATTERN.source,
    example: 'corp',
  }),
  issuer: providerFields.issuer.meta({
    description:
      'The OIDC issuer: an https URL without credentials, query or fragment; svc reads <issuer>/.well-known/openid-configuration.',
    example: 'https://idp.example.com',
  }),
  client_id: providerFields.client_id.meta({ description: 'Up to 255 characters.', example: 'svc' }),
  client_auth_method: clientAuthMethod.meta({
    description:
      "How svc sends the client secret to the token endpoint. `automatic` (the default) sends the HTTP Basic header and, if the provider refuses the client's credentials, the request body once, then remembers what worked. `client_secret_basic` or `client_secret_post` is accepted only when the provider's discovery lists it (422 `client-auth-not-listed`), unless `skip_discovery`.",
  }),
};

/** POST /api/sso/providers. */
export const NewSsoProvider = z
  .strictObject({
    ...fields,
    client_secret: clientSecretValue
      .refine((v) => v.length > 0, 'A blank client secret is not a secret: leave the field out for a public client.')
      .optional()
      .openapi({ description: 'Write-only. Leave it out for a public (PKCE-only) client. Up to 1024 characters.' }),
    enabled: z.boolean().optional().openapi({ description: 'Default true.' }),
    sign_out_at_provider: signOutAtProvider,
    client_auth_method: fields.client_auth_method.optional(),
    skip_discovery: skipDiscovery,
  })
  .openapi('NewSsoProvider');

/** PATCH /api/sso/providers/{id}: only the fields sent change. */
export const SsoProviderPatch = z
  .strictObject({
    display_name: fields.display_name.optional(),
    slug: fields.slug.optional(),
    issuer: fields.issuer.optional().openapi({
      description:
        'A new issuer removes every identity linked through the provider and ends the sessions signed in through it: an identity at the old issuer is not the same person as one at the new issuer.',
    }),
    client_id: fields.client_id.optional().openapi({
      description:
        'Up to 255 characters. A new client id ends the sessions signed in through the provider (its logout tokens would no longer verify).',
    }),
    enabled: z.boolean().optional().openapi({
      description: 'Disabling ends the sessions it opened (its logout tokens are refused while it is disabled).',
    }),
    sign_out_at_provider: signOutAtProvider,
    client_auth_method: fields.client_auth_method.optional(),
    client_secret: clientSecretValue
      .refine((v) => v.length > 0, 'A blank client secret is not a secret: send null to remove the stored one.')
      .nullable()
      .optional()
      .openapi({
        description:
          'Write-only. A string replaces the stored secret, null removes it (a public client), absent keeps it.',
      }),
    skip_discovery: skipDiscovery,
  })
  .openapi('SsoProviderPatch');

/** A provider for the API: the secret reduced to `has_secret`, with the callback URLs under `origin`. */
export function presentProvider(
  { provider: p, author, linked }: ProviderDetail,
  origin: string,
): z.infer<typeof SsoProvider> {
  const urls = callbackUrls(origin, p.slug);
  return {
    id: p.id,
    display_name: p.display_name,
    slug: p.slug,
    issuer: p.issuer,
    client_id: p.client_id,
    has_secret: p.secretSet,
    enabled: p.enabled,
    client_auth_method: p.clientAuthMethod,
    client_auth_learned: p.clientAuthLearned
      ? { method: p.clientAuthLearned.method, learned_at: iso(p.clientAuthLearned.at) }
      : null,
    linked_identities: linked,
    callback_urls: { sign_in: urls.login, link: urls.link },
    sign_out_at_provider: p.signOutAtProvider,
    logout_urls: {
      post_logout_redirect: postLogoutRedirectUri(origin),
      backchannel: backchannelLogoutUri(origin, p.slug),
    },
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
    created_by: { id: p.createdBy, username: author },
  };
}

/** A binding for the API. */
export function presentIdentity(i: IdentityListing): z.infer<typeof SsoIdentity> {
  return {
    id: i.id,
    provider_id: i.provider_id,
    provider_slug: i.provider_slug,
    provider_display_name: i.provider_name,
    sub: i.sub,
    label: i.label,
    account_id: i.account_id,
    username: i.username,
    linked_at: iso(i.linked_at),
  };
}

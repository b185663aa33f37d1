// The rules for a provider's fields (one rule each, shared by the Settings forms and the JSON API), and the admin
// forms built from them; messages are what the page shows beside a field and what the API puts in `errors`.
import { z } from 'zod';
import { idField } from '../../http/forms.ts';
import { hasInvisibleCharacters } from '../text-rules.ts';
import { ISSUER_REFUSALS } from './sso.refusals.ts';

const text = (what: string, max: number) =>
  z
    .string({ error: `Enter the ${what}.` })
    .transform((v) => v.trim())
    .refine((v) => v.length > 0, `Enter the ${what}.`)
    .refine((v) => v.length <= max, `The ${what} is at most ${max} characters.`)
    .refine((v) => !hasInvisibleCharacters(v), `The ${what} cannot contain control or invisible characters.`);

/** Lowercase letters, digits and internal hyphens. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const slug = text('slug', 64).refine(
  (v) => v.length === 0 || SLUG_PATTERN.test(v),
  'Use lowercase letters, digits and hyphens between them, such as "corp-sso".',
);

/**
 * Whether an issuer URL's path reaches into `/.well-known/`. Refused: openid-client would fetch such a URL as the
 * discovery document itself and skip its check that the document's `issuer` is the configured one.
 */
export function hasWellKnownPath(issuer: string): boolean {
  if (!URL.canParse(issuer)) return false;
  const path = new URL(issuer).pathname.toLowerCase();
  return path.includes('/.well-known/') || path.endsWith('/.well-known');
}

/** The issuer: an absolute https URL without credentials, query or fragment, outside `/.well-known/`. */
const issuer = text('issuer URL', 2048)
  .refine((v) => v.length === 0 || URL.canParse(v), ISSUER_REFUSALS['not-url'].words)
  .refine((v) => !URL.canParse(v) || new URL(v).protocol === 'https:', ISSUER_REFUSALS['not-https'].words)
  .refine((v) => {
    if (!URL.canParse(v)) return true;
    const u = new URL(v);
    return u.username === '' && u.password === '' && u.search === '' && u.hash === '';
  }, ISSUER_REFUSALS.credentials.words)
  .refine((v) => !hasWellKnownPath(v), ISSUER_REFUSALS['well-known'].words);

/** The two ways svc can send a client secret to a token endpoint: the HTTP Basic header, or the request body. */
export const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'] as const;
export type SecretMethod = (typeof SECRET_METHODS)[number];
/** A provider's "Client authentication": automatic (the default), or one method an administrator chose. */
export const CLIENT_AUTH_SETTINGS = ['automatic', ...SECRET_METHODS] as const;
export type ClientAuthSetting = (typeof CLIENT_AUTH_SETTINGS)[number];

/** The client authentication setting, one of CLIENT_AUTH_SETTINGS. */
export const clientAuthMethod = z.enum(CLIENT_AUTH_SETTINGS, {
  error: 'Choose the client authentication: automatic, client_secret_basic or client_secret_post.',
});

/** A provider's settings, one rule per field: both doors (forms and API) validate with these. */
export const providerFields = {
  display_name: text('display name', 100),
  slug,
  issuer,
  client_id: text('client ID', 255),
};

/** A client secret that is given (blank handling is each door's own: the form keeps, the API refuses). */
export const clientSecretValue = z
  .string({ error: 'Enter the client secret as text.' })
  .refine((v) => v.length <= 1024, 'The client secret is at most 1024 characters.')
  .refine((v) => !hasInvisibleCharacters(v), 'The client secret cannot contain control characters.');

const id = idField('That item no longer exists.');
/** An unticked checkbox is absent from the form. */
const checkbox = z
  .string()
  .optional()
  .transform((v) => v !== undefined);
/** A blank secret field means "none" (create) or "keep" (secret form). */
const optionalSecret = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v))
  .pipe(clientSecretValue.optional());

/** POST /settings/sso: a new (enabled) provider. */
export const createProviderSchema = z.object({
  ...providerFields,
  client_secret: optionalSecret,
  // Absent (a form from before the setting existed): automatic.
  client_auth_method: clientAuthMethod.optional(),
});

/** POST /settings/sso/update. */
export const updateProviderSchema = z.object({
  id,
  ...providerFields,
  enabled: checkbox,
  sign_out_at_provider: checkbox,
  // Absent (a form from before the setting existed): kept.
  client_auth_method: clientAuthMethod.optional(),
});

/** POST /settings/sso/secret: blank keeps the secret; the clear checkbox removes it and wins. */
export const providerSecretSchema = z.object({ id, client_secret: optionalSecret, clear_secret: checkbox });

/** Forms that only name one row (provider delete, binding removal, unlink). */
export const idSchema = z.object({ id });

/** A provider's validated settings. */
export type ProviderSettings = z.output<z.ZodObject<typeof providerFields>>;
/**
 * A new provider: its settings, a secret or none, enabled unless said otherwise, automatic client auth unless said,
 * and signing out locally only unless said.
 */
export type CreateProviderInput = ProviderSettings & {
  client_secret?: string;
  enabled?: boolean;
  sign_out_at_provider?: boolean;
  client_auth_method?: ClientAuthSetting;
};
/**
 * A change to a provider: the fields named change, the rest stay. `client_secret`: a string replaces, null clears,
 * absent keeps.
 */
export type ProviderChange = { id: string } & Partial<ProviderSettings> & {
    enabled?: boolean;
    client_secret?: string | null;
    sign_out_at_provider?: boolean;
    client_auth_method?: ClientAuthSetting;
  };
export type ProviderSecretInput = z.output<typeof providerSecretSchema>;

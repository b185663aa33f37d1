// POST /settings/sso...: declare, change, re-secret and delete (after a confirmation step) providers; remove bindings.
// Admin-only by the gate.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { sessionActor, type AppEnv, type Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { errorPage } from '../../http/render.tsx';
import { secretRetry } from '../../http/views/secret-retry.tsx';
import type { RenderSettings } from '../../http/views/settings.ts';
import { NOT_ADMIN, wordsOf } from '../refusals.ts';
import {
  changeProvider,
  changeProviderSecret,
  createProvider,
  providerDetails,
  removeIdentity,
  removeProvider,
} from './sso.providers.service.ts';
import type { DiscoveryProblem } from './sso.discovery-check.ts';
import { PROVIDER_REFUSALS } from './sso.refusals.ts';
import {
  createProviderSchema,
  idSchema,
  providerSecretSchema,
  updateProviderSchema,
  type SecretMethod,
} from './sso.schema.ts';
import { ssoTabBody } from './sso.tab.tsx';
import { DeleteProviderConfirm, type TabFormState } from './sso.provider-panel.tsx';
import { discoveryMessage } from './sso.views.tsx';

/**
 * "Save anyway: the provider is not reachable from here yet": skips the discovery check (an unticked box is absent).
 */
const saveAnyway = {
  save_anyway: z
    .string()
    .optional()
    .transform((v) => v !== undefined && v !== ''),
};
const createSchema = createProviderSchema.extend(saveAnyway);
const updateSchema = updateProviderSchema.extend(saveAnyway);
/** Delete asks first: only `confirm=yes` (the confirmation page's button) deletes. */
const deleteSchema = idSchema.extend({ confirm: z.string().optional() });

const DUPLICATE_SLUG = wordsOf(PROVIDER_REFUSALS['duplicate-slug'], {});
const GONE = wordsOf(PROVIDER_REFUSALS['not-found'], {});
/** The act refused because its actor is not an administrator (the domain's own check, behind the gate's). */
const notAllowed = (c: Ctx) => errorPage(c, NOT_ADMIN.status, 'Not allowed', NOT_ADMIN.words);

const done = (c: Ctx, notice: string) => c.redirect(`/settings?tab=sso&notice=${notice}`, 303);

export function ssoAdminRoutes(deps: Deps, renderSettings: RenderSettings) {
  const app = new Hono<AppEnv>();

  /** Shows the tab again, in its tab bar, with a failed form's errors in its summary and beside its fields. */
  const again = async (c: Ctx, state: TabFormState, error?: string, status: 400 | 404 | 409 | 422 = 400) =>
    renderSettings(c, 'sso', await ssoTabBody(deps, c, { state, error }), status);

  /** A secret is never shown again, not even in memory handed to the view. */
  const withoutSecret = (v: Record<string, string>) =>
    Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'client_secret'));

  const invalid = (
    c: Ctx,
    form: TabFormState['form'],
    result: { errors: Record<string, string>; values: Record<string, string> },
    askSecret = false,
  ) => again(c, { form, id: result.values.id, errors: result.errors, values: withoutSecret(result.values), askSecret });

  /** A failed discovery re-shows the form with the reason beside the issuer and the "Save anyway" box. */
  const undiscoverable = (
    c: Ctx,
    form: 'create' | 'update',
    input: { id?: string; issuer: string },
    problem: DiscoveryProblem,
    askSecret = false,
  ) =>
    again(
      c,
      {
        form,
        id: input.id,
        errors: { issuer: discoveryMessage(problem, input.issuer) },
        values: values(c),
        offerSaveAnyway: true,
        askSecret,
      },
      undefined,
      422,
    );

  /** A client authentication method the provider's discovery does not list: the reason beside the setting. */
  const notListed = (
    c: Ctx,
    state: Pick<TabFormState, 'form' | 'id' | 'askSecret'>,
    refused: { method: SecretMethod; listed: SecretMethod[] },
  ) =>
    again(
      c,
      {
        ...state,
        errors: { client_auth_method: wordsOf(PROVIDER_REFUSALS['client-auth-not-listed'], refused) },
        values: values(c),
      },
      undefined,
      422,
    );

  const values = (c: Ctx) =>
    withoutSecret(Object.fromEntries([...(c.get('form') ?? new URLSearchParams())].filter(([k]) => k !== '_csrf')));

  // A refused form never shows its secret again, so it asks for it again (secret-retry.tsx) and refuses a blank one,
  // before discovery is tried: "Save anyway" alone never turns a confidential client into a public one.
  app.post('/settings/sso', async (c) => {
    const { ask: askSecret, owed } = secretRetry(c.get('form'), 'client_secret');
    const form = parseForm(c, createSchema);
    if (!form.ok) return invalid(c, 'create', form, askSecret);
    const { save_anyway, ...input } = form.data;
    if (owed)
      return again(c, { form: 'create', errors: {}, values: values(c), offerSaveAnyway: save_anyway, askSecret });
    const result = await createProvider(deps, sessionActor(c), input, { checkDiscovery: !save_anyway });
    if (!result.ok && result.reason === 'not-admin') return notAllowed(c);
    if (!result.ok && result.reason === 'undiscoverable')
      return undiscoverable(c, 'create', input, result.problem, askSecret);
    if (!result.ok && result.reason === 'client-auth-not-listed')
      return notListed(c, { form: 'create', askSecret }, result);
    if (!result.ok)
      return again(
        c,
        {
          form: 'create',
          errors: { slug: DUPLICATE_SLUG },
          values: values(c),
          offerSaveAnyway: save_anyway,
          askSecret,
        },
        undefined,
        409,
      );
    return done(c, save_anyway ? 'created-unchecked' : 'created');
  });

  // A disabled provider is saved without discovery (the domain's rule): nobody signs in with it.
  app.post('/settings/sso/update', async (c) => {
    const form = parseForm(c, updateSchema);
    if (!form.ok) return invalid(c, 'update', form);
    const { save_anyway, ...change } = form.data;
    const result = await changeProvider(deps, sessionActor(c), change, { checkDiscovery: !save_anyway });
    if (!result.ok && result.reason === 'not-admin') return notAllowed(c);
    if (!result.ok && result.reason === 'not-found')
      return again(c, { form: 'update', errors: {}, values: {} }, GONE, 404);
    if (!result.ok && result.reason === 'undiscoverable') return undiscoverable(c, 'update', change, result.problem);
    if (!result.ok && result.reason === 'client-auth-not-listed')
      return notListed(c, { form: 'update', id: change.id }, result);
    if (!result.ok)
      return again(
        c,
        { form: 'update', id: change.id, errors: { slug: DUPLICATE_SLUG }, values: values(c) },
        undefined,
        409,
      );
    const ended = result.endedSessions > 0 ? `&ended=${result.endedSessions}` : '';
    if (result.issuerChanged) return done(c, `issuer-changed&removed=${result.removedIdentities}${ended}`);
    return done(c, `${save_anyway ? 'updated-unchecked' : 'updated'}${ended}`);
  });

  // "Clear the secret" wins over a typed value, so a refused attempt with it ticked owes no secret.
  app.post('/settings/sso/secret', async (c) => {
    const raw = c.get('form');
    const { ask: askSecret, owed } = secretRetry(raw, 'client_secret', raw?.has('clear_secret') ?? false);
    const form = parseForm(c, providerSecretSchema);
    if (!form.ok) return invalid(c, 'secret', form, askSecret);
    if (owed) {
      if (!(await providerDetails(deps, form.data.id)).length)
        return again(c, { form: 'secret', errors: {}, values: {} }, GONE, 404);
      return again(c, { form: 'secret', id: form.data.id, errors: {}, values: {}, askSecret });
    }
    const result = await changeProviderSecret(deps, sessionActor(c), form.data);
    if (!result.ok && result.reason === 'not-admin') return notAllowed(c);
    if (!result.ok) return again(c, { form: 'secret', errors: {}, values: {} }, GONE, 404);
    return done(c, `secret-${result.outcome}`);
  });

  // The first post shows a confirmation page saying how many linked identities go; only its button (confirm=yes)
  // deletes. A missing, malformed or stale id is an idempotent no-op (never looked up unless well-formed); control
  // characters are refused.
  app.post('/settings/sso/delete', async (c) => {
    const form = parseForm(c, deleteSchema);
    if (!form.ok && form.control) return again(c, { form: 'update', errors: {}, values: {} }, form.errors.id ?? GONE);
    if (form.ok && form.data.confirm !== 'yes') {
      const [detail] = await providerDetails(deps, form.data.id);
      if (!detail) return done(c, 'gone');
      return renderSettings(c, 'sso', <DeleteProviderConfirm provider={detail.provider} linked={detail.linked} />);
    }
    if (form.ok && !(await removeProvider(deps, sessionActor(c), form.data.id)).ok) return notAllowed(c);
    return done(c, 'deleted');
  });

  app.post('/settings/sso/identity/remove', async (c) => {
    const form = parseForm(c, idSchema);
    if (!form.ok && form.control) return again(c, { form: 'update', errors: {}, values: {} }, form.errors.id ?? GONE);
    if (form.ok && !(await removeIdentity(deps, sessionActor(c), form.data.id)).ok) return notAllowed(c);
    return done(c, 'identity-removed');
  });

  return app;
}

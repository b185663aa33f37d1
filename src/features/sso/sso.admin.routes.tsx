// POST /settings/sso...: declare, change, re-secret and delete providers; remove bindings. Admin-only by the gate.
import { Hono } from 'hono';
import type { Deps } from '../../deps.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { render } from '../../http/render.tsx';
import { changeProvider, changeProviderSecret, createProvider, removeIdentity, removeProvider } from './sso.providers.service.ts';
import { createProviderSchema, idSchema, providerSecretSchema, updateProviderSchema } from './sso.schema.ts';
import { ssoTabBody } from './sso.tab.tsx';
import type { TabFormState } from './sso.views.tsx';

const DUPLICATE_SLUG = 'Another provider already uses this slug. Choose a different one.';
const GONE = 'That provider no longer exists.';

const done = (c: Ctx, notice: string) => c.redirect(`/settings?tab=sso&notice=${notice}`, 303);

export function ssoAdminRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  /** Shows the tab again with a failed form's errors beside its fields. */
  const again = async (c: Ctx, state: TabFormState, error?: string, status: 400 | 404 | 409 = 400) =>
    render(c, 'Single sign-on settings', <>{await ssoTabBody(deps, c, { state, error })}</>, status);

  const invalid = (c: Ctx, form: TabFormState['form'], result: { errors: Record<string, string>; values: Record<string, string> }) =>
    again(c, { form, id: result.values.id, errors: result.errors, values: result.values }, 'The form has errors; see below.');

  const values = (c: Ctx) => Object.fromEntries([...(c.get('form') ?? new URLSearchParams())].filter(([k]) => k !== '_csrf' && k !== 'client_secret'));

  app.post('/settings/sso', async (c) => {
    const form = parseForm(c, createProviderSchema);
    if (!form.ok) return invalid(c, 'create', form);
    const result = await createProvider(deps, c.get('session')!.account.id, form.data);
    if (!result.ok) return again(c, { form: 'create', errors: { slug: DUPLICATE_SLUG }, values: values(c) }, DUPLICATE_SLUG, 409);
    return done(c, 'created');
  });

  app.post('/settings/sso/update', async (c) => {
    const form = parseForm(c, updateProviderSchema);
    if (!form.ok) return invalid(c, 'update', form);
    const result = await changeProvider(deps, form.data);
    if (!result.ok && result.reason === 'not-found') return again(c, { form: 'update', errors: {}, values: {} }, GONE, 404);
    if (!result.ok) return again(c, { form: 'update', id: form.data.id, errors: { slug: DUPLICATE_SLUG }, values: values(c) }, DUPLICATE_SLUG, 409);
    if (result.issuerChanged) return done(c, `issuer-changed&removed=${result.removedIdentities}`);
    return done(c, 'updated');
  });

  app.post('/settings/sso/secret', async (c) => {
    const form = parseForm(c, providerSecretSchema);
    if (!form.ok) return invalid(c, 'secret', form);
    const result = await changeProviderSecret(deps, form.data);
    if (!result.ok) return again(c, { form: 'secret', errors: {}, values: {} }, GONE, 404);
    return done(c, `secret-${result.outcome}`);
  });

  // A missing, malformed or stale id is an idempotent no-op (never looked up unless well-formed); control characters are refused.
  app.post('/settings/sso/delete', async (c) => {
    const form = parseForm(c, idSchema);
    if (!form.ok && form.control) return again(c, { form: 'update', errors: {}, values: {} }, form.errors.id ?? GONE);
    if (form.ok) await removeProvider(deps, form.data.id);
    return done(c, 'deleted');
  });

  app.post('/settings/sso/identity/remove', async (c) => {
    const form = parseForm(c, idSchema);
    if (!form.ok && form.control) return again(c, { form: 'update', errors: {}, values: {} }, form.errors.id ?? GONE);
    if (form.ok) await removeIdentity(deps, form.data.id);
    return done(c, 'identity-removed');
  });

  return app;
}

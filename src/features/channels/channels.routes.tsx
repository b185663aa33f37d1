// POST /settings/channels, /update, /delete and /retention (admin only: the gate covers /settings).
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { errorPage, render } from '../../http/render.tsx';
import { setRetentionDays, RETENTION_MAX_DAYS, RETENTION_MIN_DAYS } from '../messages/retention.service.ts';
import { SettingsFrame } from '../settings/settings.views.tsx';
import { channelsTabBody, type ChannelsTabState } from './channels.tab.tsx';
import { createChannel, deleteChannel, updateChannel } from './channels.service.ts';

const classesField = z.array(z.string()).max(10);

const createSchema = z.object({
  url: z.string().default(''),
  classes: classesField,
  secret: z.string().default(''),
});

const NO_CHANNEL = 'The form did not say which channel to change.';

const updateSchema = z.object({
  id: idField(NO_CHANNEL),
  url: z.string().default(''),
  classes: classesField,
  enabled: z.string().optional(),
  secret: z.string().default(''),
  clear_secret: z.string().optional(),
});

const deleteSchema = z.object({ id: idField(NO_CHANNEL) });
const retentionSchema = z.object({ days: z.string().default('') });

const TAB = '/settings?tab=channels';

async function refuse(deps: Deps, c: Ctx, state: ChannelsTabState) {
  return render(c, 'Settings', <SettingsFrame current="channels">{await channelsTabBody(deps, c, state)}</SettingsFrame>, 400);
}

/** Channel administration and the retention dial; admin-only because they sit under /settings. */
export function channelsRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.post('/settings/channels', async (c) => {
    const form = parseForm(c, createSchema, { multi: ['classes'] });
    if (!form.ok) return refuse(deps, c, { form: 'create', values: { url: form.values.url }, errors: { url: form.errors.url ?? form.errors.classes ?? form.errors.secret ?? 'Check the form.' } });
    const result = await createChannel(deps, c.get('session')!.account.id, form.data);
    if (!result.ok) return refuse(deps, c, { form: 'create', values: { url: form.data.url, classes: form.data.classes }, errors: result.errors });
    return c.redirect(`${TAB}&notice=created`, 303);
  });

  app.post('/settings/channels/update', async (c) => {
    const form = parseForm(c, updateSchema, { multi: ['classes'] });
    if (!form.ok) {
      if (!form.values.id) return errorPage(c, 400, 'No channel chosen', form.errors.id ?? NO_CHANNEL);
      // A malformed id names no channel, as a stale one: never looked up.
      if (form.errors.id) return c.redirect(`${TAB}&notice=gone`, 303);
      return refuse(deps, c, { form: 'edit', id: form.values.id, values: { url: form.values.url }, errors: { url: form.errors.url ?? form.errors.secret ?? 'Check the form.' } });
    }
    const d = form.data;
    const result = await updateChannel(deps, {
      id: d.id,
      url: d.url,
      classes: d.classes,
      enabled: d.enabled !== undefined,
      secret: d.secret,
      clearSecret: d.clear_secret !== undefined,
    });
    if (!result.ok && result.reason === 'not-found') return c.redirect(`${TAB}&notice=gone`, 303);
    if (!result.ok) {
      return refuse(deps, c, { form: 'edit', id: d.id, values: { url: d.url, classes: d.classes, enabled: d.enabled !== undefined }, errors: result.errors });
    }
    return c.redirect(`${TAB}&notice=updated`, 303);
  });

  app.post('/settings/channels/delete', async (c) => {
    const form = parseForm(c, deleteSchema);
    if (!form.ok && form.control) return errorPage(c, 400, 'No channel chosen', form.errors.id ?? NO_CHANNEL);
    // A missing or malformed id names no channel, as a stale one: never looked up.
    const { existed } = form.ok ? await deleteChannel(deps, form.data.id) : { existed: false };
    return c.redirect(`${TAB}&notice=${existed ? 'deleted' : 'gone'}`, 303);
  });

  app.post('/settings/channels/retention', async (c) => {
    const form = parseForm(c, retentionSchema);
    const raw = form.ok ? form.data.days.trim() : '';
    const result = /^\d{1,5}$/.test(raw) ? await setRetentionDays(deps, Number(raw)) : ({ ok: false } as const);
    if (!result.ok) {
      return refuse(deps, c, { form: 'retention', value: raw.slice(0, 20), error: `Enter a whole number of days from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}.` });
    }
    return c.redirect(`${TAB}&notice=retention-saved`, 303);
  });

  return app;
}

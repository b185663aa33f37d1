// POST /settings/channels, /update, /delete (after a confirmation step), /check and /retention, and GET
// /settings/channels/<id>, one channel's page (admin only: the gate covers /settings).
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { sessionActor, type AppEnv, type Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { errorPage } from '../../http/render.tsx';
import { refuseControlQuery } from '../../http/query.ts';
import { isId } from '../../http/text.ts';
import { secretRetry } from '../../http/views/secret-retry.tsx';
import type { RenderSettings } from '../../http/views/settings.ts';
import type { ConnectionCheck } from '../../net/check-connection.ts';
import { RETENTION_REFUSALS } from '../messages/retention.refusals.ts';
import { setRetentionDays } from '../messages/retention.service.ts';
import { NOT_ADMIN, wordsOf } from '../refusals.ts';
import { channelsTabBody, type ChannelsTabState } from './channels.tab.tsx';
import { ChannelDetailView, DeleteChannelConfirm } from './channel-detail.views.tsx';
import { findChannelSummary } from './channels.repo.ts';
import {
  channelDetail,
  channelErrors,
  checkChannelConnection,
  createChannel,
  deleteChannel,
  updateChannel,
} from './channels.service.ts';
import { channelNotice } from './channels.views.tsx';

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

const deleteSchema = z.object({ id: idField(NO_CHANNEL), confirm: z.literal('yes').optional() });
const checkSchema = z.object({ id: idField(NO_CHANNEL) });
const retentionSchema = z.object({ days: z.string().default('') });

const TAB = '/settings?tab=channels';

/** The act refused because its actor is not an administrator (the domain's own check, behind the gate's). */
const notAllowed = (c: Ctx) => errorPage(c, NOT_ADMIN.status, 'Not allowed', NOT_ADMIN.words);

/** Channel administration and the retention dial; admin-only because they sit under /settings. */
export function channelsRoutes(deps: Deps, renderSettings: RenderSettings) {
  const app = new Hono<AppEnv>();

  async function refuse(deps: Deps, c: Ctx, state: ChannelsTabState) {
    return renderSettings(c, 'channels', await channelsTabBody(deps, c, state), 400);
  }

  /**
   * One channel's page, with a connection check's result when one was just run; a channel gone sends back to the list.
   */
  async function channelPage(deps: Deps, c: Ctx, id: string, check?: ConnectionCheck) {
    const detail = isId(id) ? await channelDetail(deps, id) : undefined;
    if (!detail) return c.redirect(`${TAB}&notice=gone`, 303);
    const body = <ChannelDetailView detail={detail} check={check} notice={channelNotice(c.req.query('notice'))} />;
    return renderSettings(c, 'channels', body);
  }

  // A refused form never shows its secret again, so it asks for it again (secret-retry.tsx) and refuses a blank one.
  app.post('/settings/channels', async (c) => {
    const { ask: askSecret, owed } = secretRetry(c.get('form'), 'secret');
    const form = parseForm(c, createSchema, { multi: ['classes'] });
    if (!form.ok)
      return refuse(deps, c, { form: 'create', values: { url: form.values.url }, errors: form.errors, askSecret });
    const values = { url: form.data.url, classes: form.data.classes };
    if (owed) return refuse(deps, c, { form: 'create', values, errors: channelErrors(form.data), askSecret });
    const result = await createChannel(deps, sessionActor(c), form.data);
    if (!result.ok && result.reason === 'not-admin') return notAllowed(c);
    if (!result.ok) return refuse(deps, c, { form: 'create', values, errors: result.errors, askSecret });
    return c.redirect(`${TAB}&notice=created`, 303);
  });

  app.post('/settings/channels/update', async (c) => {
    const raw = c.get('form');
    // "Remove the secret" wins over a typed value, so a refused attempt with it ticked owes no secret.
    const { ask: askSecret, owed } = secretRetry(raw, 'secret', raw?.has('clear_secret') ?? false);
    const form = parseForm(c, updateSchema, { multi: ['classes'] });
    if (!form.ok) {
      if (!form.values.id) return errorPage(c, 400, 'No channel chosen', form.errors.id ?? NO_CHANNEL);
      // A malformed id names no channel, as a stale one: never looked up.
      if (form.errors.id) return c.redirect(`${TAB}&notice=gone`, 303);
      return refuse(deps, c, {
        form: 'edit',
        id: form.values.id,
        values: { url: form.values.url },
        errors: form.errors,
        askSecret,
      });
    }
    const d = form.data;
    const values = { url: d.url, classes: d.classes, enabled: d.enabled !== undefined };
    if (owed) {
      if (!(await findChannelSummary(deps.db, d.id))) return c.redirect(`${TAB}&notice=gone`, 303);
      return refuse(deps, c, { form: 'edit', id: d.id, values, errors: channelErrors(d), askSecret });
    }
    const result = await updateChannel(deps, sessionActor(c), {
      id: d.id,
      url: d.url,
      classes: d.classes,
      enabled: d.enabled !== undefined,
      secret: d.secret,
      clearSecret: d.clear_secret !== undefined,
    });
    if (!result.ok && result.reason === 'not-found') return c.redirect(`${TAB}&notice=gone`, 303);
    if (!result.ok && result.reason === 'not-admin') return notAllowed(c);
    if (!result.ok) return refuse(deps, c, { form: 'edit', id: d.id, values, errors: result.errors, askSecret });
    return c.redirect(`${TAB}&notice=updated`, 303);
  });

  app.post('/settings/channels/delete', async (c) => {
    const form = parseForm(c, deleteSchema);
    if (!form.ok && form.control) return errorPage(c, 400, 'No channel chosen', form.errors.id ?? NO_CHANNEL);
    // A missing or malformed id names no channel, as a stale one: never looked up.
    if (form.ok && form.data.confirm === undefined) {
      const ch = await findChannelSummary(deps.db, form.data.id);
      if (!ch) return c.redirect(`${TAB}&notice=gone`, 303);
      return renderSettings(c, 'channels', <DeleteChannelConfirm ch={ch} />);
    }
    const result = form.ok
      ? await deleteChannel(deps, sessionActor(c), form.data.id)
      : ({ ok: true, existed: false } as const);
    if (!result.ok) return notAllowed(c);
    return c.redirect(`${TAB}&notice=${result.existed ? 'deleted' : 'gone'}`, 303);
  });

  app.get('/settings/channels/:id', refuseControlQuery, (c) => {
    const id = c.req.param('id');
    // Not an id at all (a control character, a slash): no channel was ever there, so no "it no longer exists".
    if (!isId(id)) return errorPage(c, 404, 'Not found', 'There is no channel at this address.');
    return channelPage(deps, c, id);
  });

  app.post('/settings/channels/check', async (c) => {
    const form = parseForm(c, checkSchema);
    if (!form.ok && form.control) return errorPage(c, 400, 'No channel chosen', form.errors.id ?? NO_CHANNEL);
    const result = form.ok ? await checkChannelConnection(deps, sessionActor(c), form.data.id) : undefined;
    if (result?.ok === false && result.reason === 'not-admin') return notAllowed(c);
    if (!form.ok || !result?.ok) return c.redirect(`${TAB}&notice=gone`, 303);
    return channelPage(deps, c, form.data.id, result.check);
  });

  app.post('/settings/channels/retention', async (c) => {
    const form = parseForm(c, retentionSchema);
    const raw = form.ok ? form.data.days.trim() : '';
    const result = /^\d{1,5}$/.test(raw)
      ? await setRetentionDays(deps, sessionActor(c), Number(raw))
      : ({ ok: false, reason: 'out-of-range' } as const);
    if (!result.ok && result.reason === 'not-admin') return notAllowed(c);
    if (!result.ok) {
      return refuse(deps, c, {
        form: 'retention',
        value: raw.slice(0, 20),
        error: wordsOf(RETENTION_REFUSALS[result.reason], undefined),
      });
    }
    return c.redirect(`${TAB}&notice=retention-saved`, 303);
  });

  return app;
}

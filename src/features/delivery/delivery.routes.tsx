// Re-sends (admin-only by the /settings gate): POST /settings/deliveries/resend re-sends one dead-lettered (or cancelled)
// delivery; GET /settings/deliveries/resend-all?channel= asks to confirm re-sending a channel's dead letters, POST acts.
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { errorPage, render } from '../../http/render.tsx';
import { refuseControlQuery } from '../../http/query.ts';
import { isId } from '../../http/text.ts';
import { SettingsFrame } from '../settings/settings.views.tsx';
import { resendAllOffer } from './deliveries-view.service.ts';
import { deliveriesHref, ResendAllConfirm } from './deliveries-list.views.tsx';
import { resendDeadOfChannel, resendDelivery, type ResendRefusal } from './resend.service.ts';

/** A delivery's own alphabet: a row id, or "<message id>.<channel id>" as emit() names the first delivery of a pair. */
const DELIVERY_ID = /^[A-Za-z0-9_-]{1,64}(?:\.[A-Za-z0-9_-]{1,64})?$/;

const resendSchema = z.object({
  delivery: z.string({ error: 'Choose a delivery to re-send.' }).trim().regex(DELIVERY_ID, 'Choose a delivery to re-send.'),
  back: z.string().max(512, 'That return address is too long.').optional(),
});

const resendAllSchema = z.object({ channel: idField('Choose a channel whose dead letters to re-send.') });

/** Each refusal's status and plain words. */
const REFUSALS: Record<ResendRefusal, [ContentfulStatusCode, string]> = {
  'not-found': [404, 'That delivery no longer exists.'],
  'not-undelivered': [409, 'Only a dead-lettered or cancelled delivery can be re-sent; this one is pending or already delivered.'],
  'already-resent': [409, 'This delivery has already been re-sent.'],
  'channel-deleted': [409, 'Its channel has been deleted, so there is nowhere to send it.'],
  'channel-disabled': [409, 'Its channel is disabled. Enable the channel first, then re-send.'],
};

/** Only a same-site path may be returned to (never another origin, never a protocol-relative URL). */
export function safeBack(back: string | undefined): string | undefined {
  if (!back || !/^\/(?![/\\])[^\s\\]*$/.test(back)) return undefined;
  return back;
}

/** The delivery admin routes (under /settings, so admin-only by the gate). */
export function deliveryRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.post('/settings/deliveries/resend', async (c) => {
    const form = parseForm(c, resendSchema);
    if (!form.ok) return errorPage(c, 400, 'Cannot re-send', form.errors.delivery ?? form.errors.back ?? 'Choose a delivery to re-send.');
    const result = await resendDelivery(deps, form.data.delivery);
    if (!result.ok) {
      const [status, message] = REFUSALS[result.reason];
      return errorPage(c, status, 'Cannot re-send', message);
    }
    return c.redirect(safeBack(form.data.back) ?? '/settings?tab=deliveries&notice=resent', 303);
  });

  app.get('/settings/deliveries/resend-all', refuseControlQuery, async (c) => {
    const id = c.req.query('channel');
    const offer = id && isId(id) ? await resendAllOffer(deps, id) : { channel: null, deadLetters: 0 };
    if (!offer.channel) return c.redirect('/settings?tab=deliveries&notice=gone', 303);
    return render(c, 'Settings', <SettingsFrame current="deliveries"><ResendAllConfirm channel={offer.channel} count={offer.deadLetters} /></SettingsFrame>);
  });

  app.post('/settings/deliveries/resend-all', async (c) => {
    const form = parseForm(c, resendAllSchema);
    if (!form.ok && form.control) return errorPage(c, 400, 'Cannot re-send', form.errors.channel ?? 'Choose a channel whose dead letters to re-send.');
    // A missing or malformed id names no channel, as a deleted one: never looked up.
    const result = form.ok ? await resendDeadOfChannel(deps, form.data.channel) : ({ ok: false, reason: 'not-found' } as const);
    if (!result.ok && result.reason === 'not-found') return c.redirect('/settings?tab=deliveries&notice=gone', 303);
    if (!result.ok) return errorPage(c, 409, 'Cannot re-send', REFUSALS['channel-disabled'][1]);
    return c.redirect(`${deliveriesHref({ channelId: form.ok ? form.data.channel : undefined })}&notice=resent-all&count=${result.count}`, 303);
  });

  return app;
}

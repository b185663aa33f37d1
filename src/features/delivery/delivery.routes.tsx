// Re-sends (admin-only by the /settings gate): POST /settings/deliveries/resend re-sends one dead-lettered (or
// cancelled) delivery and returns to the page it came from, which says what happened; GET
// /settings/deliveries/resend-all?channel= asks to confirm re-sending a channel's dead letters, POST acts.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { sessionActor, type AppEnv } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { errorPage } from '../../http/render.tsx';
import type { RenderSettings } from '../../http/views/settings.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { redirectTarget } from '../../http/redirect-target.ts';
import { isId } from '../../http/text.ts';
import { resendAllOffer } from './deliveries-view.service.ts';
import { deliveriesHref, ResendAllConfirm } from './deliveries-list.views.tsx';
import { NOT_ADMIN, wordsOf } from '../refusals.ts';
import { RESEND_ALL_REFUSALS } from './resend.refusals.ts';
import { DELIVERY_ID, withResendOutcome } from './resend-notice.tsx';
import { resendDeadOfChannel, resendDelivery } from './resend.service.ts';

const resendSchema = z.object({
  delivery: z
    .string({ error: 'Choose a delivery to re-send.' })
    .trim()
    .regex(DELIVERY_ID, 'Choose a delivery to re-send.'),
  back: z.string().max(512, 'That return address is too long.').optional(),
});

const resendAllSchema = z.object({ channel: idField('Choose a channel whose dead letters to re-send.') });

/** The pages a re-send button sits on: the Deliveries tab of Settings and a message's page. */
const RESEND_PAGES = [/^\/settings$/, /^\/messages\/[A-Za-z0-9_-]{1,64}$/];

/** The delivery admin routes (under /settings, so admin-only by the gate). */
export function deliveryRoutes(deps: Deps, renderSettings: RenderSettings) {
  const app = new Hono<AppEnv>();

  app.post('/settings/deliveries/resend', async (c) => {
    const form = parseForm(c, resendSchema);
    if (!form.ok)
      return errorPage(
        c,
        400,
        'Cannot re-send',
        form.errors.delivery ?? form.errors.back ?? 'Choose a delivery to re-send.',
      );
    // Done or refused, back to the page the button was on, whose notice says which (and to what channel).
    const result = await resendDelivery(deps, sessionActor(c), form.data.delivery);
    return c.redirect(
      withResendOutcome(redirectTarget(form.data.back, '/settings?tab=deliveries', RESEND_PAGES), result),
      303,
    );
  });

  app.get('/settings/deliveries/resend-all', refuseControlQuery, async (c) => {
    const id = c.req.query('channel');
    const offer = id && isId(id) ? await resendAllOffer(deps, id) : { channel: null, deadLetters: 0 };
    if (!offer.channel) return c.redirect('/settings?tab=deliveries&notice=gone', 303);
    return renderSettings(c, 'deliveries', <ResendAllConfirm channel={offer.channel} count={offer.deadLetters} />);
  });

  app.post('/settings/deliveries/resend-all', async (c) => {
    const form = parseForm(c, resendAllSchema);
    if (!form.ok && form.control)
      return errorPage(
        c,
        400,
        'Cannot re-send',
        form.errors.channel ?? 'Choose a channel whose dead letters to re-send.',
      );
    // A missing or malformed id names no channel, as a deleted one: never looked up.
    const result = form.ok
      ? await resendDeadOfChannel(deps, sessionActor(c), form.data.channel)
      : ({ ok: false, reason: 'not-found' } as const);
    if (!result.ok && result.reason === 'not-found') return c.redirect('/settings?tab=deliveries&notice=gone', 303);
    if (!result.ok && result.reason === 'not-admin')
      return errorPage(c, NOT_ADMIN.status, 'Not allowed', NOT_ADMIN.words);
    if (!result.ok)
      return errorPage(
        c,
        RESEND_ALL_REFUSALS[result.reason].status,
        'Cannot re-send',
        wordsOf(RESEND_ALL_REFUSALS[result.reason], undefined),
      );
    return c.redirect(
      `${deliveriesHref({ channelId: form.ok ? form.data.channel : undefined })}&notice=resent-all&count=${result.count}`,
      303,
    );
  });

  return app;
}

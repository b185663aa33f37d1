// The notice on the page a single re-send redirected back to (the message page or the Deliveries tab): the query
// names what happened (notice=resent&resent=<new delivery id>, or notice=resend-refused&reason=<refusal>).
import type { Child } from 'hono/jsx';
import type { Deps } from '../../deps.ts';
import type { Ctx } from '../../http/env.ts';
import { channelOfDelivery } from './deliveries-view.service.ts';
import { ResendNotice } from './delivery.views.tsx';
import { RESEND_REFUSALS } from './resend.refusals.ts';
import type { ResendRefusal, ResendResult } from './resend.service.ts';

/** A delivery's own alphabet: a row id, or "<message id>.<channel id>" as emit() names the first delivery of a pair. */
export const DELIVERY_ID = /^[A-Za-z0-9_-]{1,64}(?:\.[A-Za-z0-9_-]{1,64})?$/;

/** The query a re-send's redirect carries to `path` (a same-site path, kept with its own query and fragment). */
export function withResendOutcome(path: string, result: ResendResult): string {
  const url = new URL(path, 'http://svc.invalid');
  for (const name of ['notice', 'resent', 'reason']) url.searchParams.delete(name);
  if (result.ok) {
    url.searchParams.set('notice', 'resent');
    url.searchParams.set('resent', result.deliveryId);
  } else {
    url.searchParams.set('notice', 'resend-refused');
    url.searchParams.set('reason', result.reason);
  }
  return url.pathname + url.search + url.hash;
}

/** The banner for a re-send's outcome named in the query, or null; the channel's URL is shown to admins only. */
export async function resendNotice(deps: Deps, c: Ctx, showUrl: boolean): Promise<Child> {
  const code = c.req.query('notice');
  if (code === 'resend-refused') {
    const reason = c.req.query('reason');
    return reason !== undefined && Object.hasOwn(RESEND_REFUSALS, reason) ? (
      <ResendNotice outcome={{ ok: false, reason: reason as ResendRefusal }} showUrl={showUrl} />
    ) : null;
  }
  if (code !== 'resent') return null;
  const id = c.req.query('resent');
  const channel = id !== undefined && DELIVERY_ID.test(id) ? await channelOfDelivery(deps, id) : undefined;
  return <ResendNotice outcome={{ ok: true, channel }} showUrl={showUrl} />;
}

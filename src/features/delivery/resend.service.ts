// The admin re-send: a dead-lettered or cancelled delivery gets a new series of attempts to the same channel.
import { newId, type Deps } from '../../deps.ts';
import { channelEnabled, findDeliveryForUpdate, insertDelivery, laterSeriesExists } from './deliveries.repo.ts';
import { notifyDeliveriesDue } from './wakeup.ts';

/** Why a re-send was refused. */
export type ResendRefusal = 'not-found' | 'not-undelivered' | 'already-resent' | 'channel-deleted' | 'channel-disabled';

/** A re-send's outcome: the new delivery's id, or why there is none. */
export type ResendResult = { ok: true; deliveryId: string } | { ok: false; reason: ResendRefusal };

/**
 * Re-sends a dead-lettered (or cancelled) delivery: a new pending delivery of the same message (same stored body,
 * same message id) to the same channel, with a fresh budget of attempts, due now. The old row stays as history.
 * Workers are woken once the new row is committed (every process's on PostgreSQL, this process's at once).
 */
export async function resendDelivery(deps: Deps, deliveryId: string): Promise<ResendResult> {
  const result = await deps.db.transaction().execute(async (trx): Promise<ResendResult> => {
    const old = await findDeliveryForUpdate(trx, deps.dialect, deliveryId);
    if (!old) return { ok: false, reason: 'not-found' };
    if (old.state !== 'dead' && old.state !== 'cancelled') return { ok: false, reason: 'not-undelivered' };
    if (old.channel_id === null) return { ok: false, reason: 'channel-deleted' };
    const enabled = await channelEnabled(trx, old.channel_id);
    if (enabled === undefined) return { ok: false, reason: 'channel-deleted' };
    if (enabled !== 1) return { ok: false, reason: 'channel-disabled' };
    if (await laterSeriesExists(trx, old)) return { ok: false, reason: 'already-resent' };
    // Strictly later than the series it replaces, so "latest series" is well defined even within one millisecond.
    const now = Math.max(deps.clock.now(), old.created_at + 1);
    const id = newId(deps.random);
    await insertDelivery(trx, {
      id,
      message_id: old.message_id,
      channel_id: old.channel_id,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_owner: null,
      lease_until: null,
      delivered_at: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    });
    await notifyDeliveriesDue(trx, deps.dialect);
    return { ok: true, deliveryId: id };
  });
  if (result.ok) deps.wakeup.wake();
  return result;
}

// The admin re-send: a dead-lettered or cancelled delivery gets a new series of attempts to the same channel, one at a
// time or every dead letter of a channel at once. Both go through resendRows, the one rule.
import type { Selectable, Transaction } from 'kysely';
import type { DB, DeliveriesTable } from '../../db/schema.ts';
import { newId, type Deps } from '../../deps.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import {
  channelsEnabled,
  findDeliveryForUpdate,
  insertDeliveries,
  lockDeadOfChannel,
  withLaterSeries,
} from './deliveries.repo.ts';
import { notifyDeliveriesDue } from '../messages/deliveries-due.ts';

/** Why a re-send was refused. */
export type ResendRefusal =
  | 'not-found'
  | 'not-undelivered'
  | 'already-resent'
  | 'channel-deleted'
  | 'channel-disabled'
  | 'not-admin';

/** A re-send's outcome: the new delivery's id, or why there is none. */
export type ResendResult = { ok: true; deliveryId: string } | { ok: false; reason: ResendRefusal };

/** A channel-wide re-send's outcome: how many dead letters were re-queued, or why none could be. */
export type ResendAllResult =
  | { ok: true; count: number }
  | { ok: false; reason: 'not-found' | 'channel-disabled' | 'not-admin' };

type Row = Selectable<DeliveriesTable>;

/**
 * The rule of a re-send, for rows the caller has locked (PostgreSQL: FOR UPDATE; SQLite: the immediate transaction):
 * each dead-lettered or cancelled row whose channel is still enabled and which no later series replaced gets a new
 * pending delivery of the same message (same stored body, same message id) to the same channel, with a fresh budget
 * of attempts, due now. The old row stays as history. The later-series check is a statement of its own, run after the
 * lock was granted, so a concurrent re-send that committed first is seen and the row is re-queued once.
 */
async function resendRows(trx: Transaction<DB>, deps: Deps, rows: Row[]): Promise<Map<string, ResendResult>> {
  const results = new Map<string, ResendResult>();
  const channelIds = [...new Set(rows.flatMap((r) => (r.channel_id === null ? [] : [r.channel_id])))];
  const [enabled, replaced] = await Promise.all([
    channelsEnabled(trx, channelIds),
    withLaterSeries(
      trx,
      rows.map((r) => r.id),
    ),
  ]);
  const fresh = [];
  for (const old of rows) {
    const state = old.channel_id === null ? undefined : enabled.get(old.channel_id);
    let refusal: ResendRefusal | undefined;
    if (old.state !== 'dead' && old.state !== 'cancelled') refusal = 'not-undelivered';
    else if (state === undefined) refusal = 'channel-deleted';
    else if (state !== 1) refusal = 'channel-disabled';
    else if (replaced.has(old.id)) refusal = 'already-resent';
    if (refusal) {
      results.set(old.id, { ok: false, reason: refusal });
      continue;
    }
    // Strictly later than the series it replaces, so "latest series" is well defined even within one millisecond.
    const now = Math.max(deps.clock.now(), old.created_at + 1);
    const id = newId(deps.random);
    fresh.push({
      id,
      message_id: old.message_id,
      channel_id: old.channel_id,
      state: 'pending' as const,
      attempts: 0,
      next_attempt_at: now,
      lease_owner: null,
      lease_until: null,
      delivered_at: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    });
    results.set(old.id, { ok: true, deliveryId: id });
  }
  await insertDeliveries(trx, fresh);
  if (fresh.length > 0) await notifyDeliveriesDue(trx, deps.dialect);
  return results;
}

/**
 * Re-sends one dead-lettered (or cancelled) delivery, an administrator's act. Workers are woken once the new row is
 * committed (every process's on PostgreSQL, this process's at once).
 */
export async function resendDelivery(deps: Deps, actor: AdminActor, deliveryId: string): Promise<ResendResult> {
  if (!(await actorIsAdmin(deps, actor))) return { ok: false, reason: 'not-admin' };
  const result = await deps.db.transaction().execute(async (trx): Promise<ResendResult> => {
    const old = await findDeliveryForUpdate(trx, deps.dialect, deliveryId);
    if (!old) return { ok: false, reason: 'not-found' };
    return (await resendRows(trx, deps, [old])).get(old.id)!;
  });
  if (result.ok) deps.wakeup.wake();
  return result;
}

/**
 * Re-sends every dead-lettered delivery of a channel no re-send has replaced yet, in one transaction (after its
 * receiver was fixed); an administrator's act. Cancelled ones are left alone: they were not sent on purpose. Returns
 * how many were re-queued.
 */
export async function resendDeadOfChannel(deps: Deps, actor: AdminActor, channelId: string): Promise<ResendAllResult> {
  if (!(await actorIsAdmin(deps, actor))) return { ok: false, reason: 'not-admin' };
  const result = await deps.db.transaction().execute(async (trx): Promise<ResendAllResult> => {
    const enabled = (await channelsEnabled(trx, [channelId])).get(channelId);
    if (enabled === undefined) return { ok: false, reason: 'not-found' };
    if (enabled !== 1) return { ok: false, reason: 'channel-disabled' };
    const rows = await lockDeadOfChannel(trx, deps.dialect, channelId);
    const results = await resendRows(trx, deps, rows);
    return { ok: true, count: [...results.values()].filter((r) => r.ok).length };
  });
  if (result.ok && result.count > 0) deps.wakeup.wake();
  return result;
}

// Notification channel administration: create, update, delete, list. The secret is write-only:
// it goes in through create/update and comes out only as "set" or "none".
import type { Deps } from '../../deps.ts';
import { newId } from '../../deps.ts';
import { isMessageClass, type MessageClass } from '../messages/classes.ts';
import { actorIsAdmin, type AdminActor } from '../auth/admin-actor.ts';
import { wordsOf } from '../refusals.ts';
import { checkConnection, type ConnectionCheck } from '../../net/check-connection.ts';
import { countResendableDead } from '../delivery/deliveries.repo.ts';
import { validateChannelUrl } from './channel-url.ts';
import { CHANNEL_FIELD_REFUSALS, type ChannelActReason, type ChannelFieldReason } from './channels.refusals.ts';
import {
  cancelPendingDeliveries,
  countChannels,
  deleteChannelRow,
  findChannel,
  findChannelSummary,
  insertChannel,
  listChannelSummaries,
  listChannelSummariesAfter,
  recentAttemptsOfChannel,
  updateChannelRow,
  type ChannelAttempt,
  type ChannelSummary,
} from './channels.repo.ts';

/** Longest secret accepted. */
export const CHANNEL_SECRET_MAX = 512;
/** Channels per page of the admin list (there is no cap on how many exist). */
export const CHANNELS_PAGE_SIZE = 100;

/** What the create form carries. */
export interface NewChannel {
  url: string;
  classes: string[];
  /** Blank means no secret. */
  secret: string;
  /** A new channel is enabled unless this says otherwise (the API may create one disabled). */
  enabled?: boolean;
}

/** What the update form carries. */
export interface ChannelChanges {
  id: string;
  url: string;
  classes: string[];
  enabled: boolean;
  /** Blank keeps the stored secret; a typed value replaces it. */
  secret: string;
  /** Removes the secret; wins over a typed value. */
  clearSecret: boolean;
}

/** A partial update (the API's PATCH): an absent field keeps its value; `secret` null clears, a string replaces. */
export interface ChannelPatch {
  url?: string;
  classes?: string[];
  enabled?: boolean;
  secret?: string | null;
}

export type ChannelErrors = Partial<Record<'url' | 'classes' | 'secret', string>>;

/** Refused as a whole (see CHANNEL_ACT_REFUSALS): the channel is gone, or the actor is no administrator. */
type ActRefusal<R extends ChannelActReason> = R extends unknown ? { ok: false; reason: R } : never;

export type CreateChannelResult =
  | { ok: true; id: string }
  | { ok: false; reason: 'invalid'; errors: ChannelErrors }
  | ActRefusal<'not-admin'>;
export type UpdateChannelResult =
  | { ok: true }
  | { ok: false; reason: 'invalid'; errors: ChannelErrors }
  | ActRefusal<ChannelActReason>;
export type DeleteChannelResult = { ok: true; existed: boolean } | ActRefusal<'not-admin'>;
export type CheckChannelResult = { ok: true; check: ConnectionCheck } | ActRefusal<ChannelActReason>;

/** Classes as stored: de-duplicated, sorted, comma-separated. */
export function storedClasses(classes: MessageClass[]): string {
  return [...new Set(classes)].sort().join(',');
}

/** The create and update forms' field errors for `input`, without saving anything (empty when it would be accepted). */
export function channelErrors(input: { url: string; classes: string[]; secret: string }): ChannelErrors {
  return validate(input).errors;
}

function validate(input: { url: string; classes: string[]; secret: string }): {
  errors: ChannelErrors;
  url: string;
  classes: string;
  secret: string | undefined;
} {
  const errors: ChannelErrors = {};
  const url = validateChannelUrl(input.url);
  if (!url.ok) errors.url = url.words;
  const field = (reason: ChannelFieldReason) => wordsOf(CHANNEL_FIELD_REFUSALS[reason], undefined);
  const unknown = input.classes.filter((c) => !isMessageClass(c));
  if (unknown.length > 0) errors.classes = field('unknown-class');
  else if (input.classes.length === 0) errors.classes = field('no-class');
  const blank = input.secret.trim() === '';
  if (!blank && input.secret.length > CHANNEL_SECRET_MAX) errors.secret = field('secret-too-long');
  else if (!blank && /[\u0000-\u001f\u007f]/.test(input.secret)) errors.secret = field('secret-control');
  return {
    errors,
    url: url.ok ? url.url : '',
    classes: storedClasses(input.classes.filter(isMessageClass)),
    secret: blank ? undefined : input.secret,
  };
}

/** The refusal of an admin act whose actor is not an administrator, else undefined. */
async function notAdmin(deps: Deps, actor: AdminActor): Promise<ActRefusal<'not-admin'> | undefined> {
  return (await actorIsAdmin(deps, actor)) ? undefined : { ok: false, reason: 'not-admin' };
}

/** Creates a channel (enabled unless asked otherwise) authored by the actor, an administrator. */
export async function createChannel(
  deps: Deps,
  actor: AdminActor & { actorId: string },
  input: NewChannel,
): Promise<CreateChannelResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  const v = validate(input);
  if (Object.keys(v.errors).length > 0) return { ok: false, reason: 'invalid', errors: v.errors };
  const id = newId(deps.random);
  const now = deps.clock.now();
  await insertChannel(deps.db, {
    id,
    url: v.url,
    secret: v.secret ?? null,
    classes: v.classes,
    enabled: input.enabled === false ? 0 : 1,
    consecutive_failures: 0,
    last_error: null,
    last_error_at: null,
    last_success_at: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
    created_by: actor.actorId,
  });
  return { ok: true, id };
}

/**
 * Updates a channel's URL, classes, enabled flag and (per the blank/typed/clear rule) its secret; an administrator's
 * act.
 */
export async function updateChannel(
  deps: Deps,
  actor: AdminActor,
  input: ChannelChanges,
): Promise<UpdateChannelResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  const v = validate({ ...input, secret: input.clearSecret ? '' : input.secret });
  if (Object.keys(v.errors).length > 0) return { ok: false, reason: 'invalid', errors: v.errors };
  const secretChange = input.clearSecret ? { secret: null } : v.secret !== undefined ? { secret: v.secret } : {};
  const found = await updateChannelRow(deps.db, input.id, {
    url: v.url,
    classes: v.classes,
    enabled: input.enabled ? 1 : 0,
    ...secretChange,
    updated_at: deps.clock.now(),
  });
  return found ? { ok: true } : { ok: false, reason: 'not-found' };
}

/**
 * Applies a partial update through updateChannel's rules: absent fields keep the stored values. A blank secret is
 * refused rather than read as "keep" (the form's meaning), so a caller who meant to replace it is never silently
 * ignored.
 */
export async function patchChannel(
  deps: Deps,
  actor: AdminActor,
  id: string,
  patch: ChannelPatch,
): Promise<UpdateChannelResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  const current = await findChannel(deps.db, id);
  if (!current) return { ok: false, reason: 'not-found' };
  if (typeof patch.secret === 'string' && patch.secret.trim() === '') {
    return {
      ok: false,
      reason: 'invalid',
      errors: { secret: wordsOf(CHANNEL_FIELD_REFUSALS['secret-blank'], undefined) },
    };
  }
  return updateChannel(deps, actor, {
    id,
    url: patch.url ?? current.url,
    classes: patch.classes ?? current.classes.split(','),
    enabled: patch.enabled ?? current.enabled === 1,
    secret: patch.secret ?? '',
    clearSecret: patch.secret === null,
  });
}

/**
 * Deletes a channel; idempotent; an administrator's act. Its pending deliveries are cancelled; finished ones stay on
 * their messages.
 */
export async function deleteChannel(deps: Deps, actor: AdminActor, id: string): Promise<DeleteChannelResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  return deps.db.transaction().execute(async (trx): Promise<DeleteChannelResult> => {
    if (!(await findChannel(trx, id))) return { ok: true, existed: false };
    await cancelPendingDeliveries(trx, id, deps.clock.now());
    await deleteChannelRow(trx, id);
    return { ok: true, existed: true };
  });
}

/** A page of channels for the admin surface (secrets reduced to a flag), with the total. */
export async function channelsPage(
  deps: Deps,
  page: number,
): Promise<{ channels: ChannelSummary[]; total: number; page: number; pages: number }> {
  const total = await countChannels(deps.db);
  const pages = Math.max(1, Math.ceil(total / CHANNELS_PAGE_SIZE));
  // Whole pages only: a fractional page would make a fractional OFFSET, which PostgreSQL and SQLite refuse.
  const current = Math.min(Math.max(1, Math.floor(page) || 1), pages);
  const channels = await listChannelSummaries(deps.db, {
    offset: (current - 1) * CHANNELS_PAGE_SIZE,
    limit: CHANNELS_PAGE_SIZE,
  });
  return { channels, total, page: current, pages };
}

/**
 * Up to `limit` channels after a position (created_at, id), oldest first: the API's keyset paging over the same list.
 */
export function channelsAfter(
  deps: Deps,
  after: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<ChannelSummary[]> {
  return listChannelSummariesAfter(deps.db, after, limit);
}

/** One channel without its secret, or undefined. */
export function findChannelById(deps: Deps, id: string): Promise<ChannelSummary | undefined> {
  return findChannelSummary(deps.db, id);
}

/**
 * The failure streak a channel's counters tell: how many in a row, since when, and the last error (no streak: 0
 * failures).
 */
export interface FailureStreak {
  since: number | null;
  failures: number;
  lastError: string | null;
  lastErrorAt: number | null;
}

/**
 * A channel's health in words: disabled, healthy, or failing since the first failure of its current streak. A disabled
 * channel keeps the streak it had when it was disabled (`failures` 0 when it had none), shown as history.
 */
export type ChannelHealth =
  | ({ state: 'disabled' } & FailureStreak)
  | { state: 'healthy' }
  | ({ state: 'failing' } & FailureStreak);

/** The health a channel's counters tell: a disabled channel is "disabled" whatever its streak, and keeps the streak. */
export function channelHealth(
  ch: Pick<ChannelSummary, 'enabled' | 'consecutive_failures' | 'failing_since' | 'last_error' | 'last_error_at'>,
): ChannelHealth {
  const failures = ch.consecutive_failures;
  // A streak from before failing_since existed (0017 backfilled what it could) falls back to its last error's time.
  const streak: FailureStreak =
    failures > 0
      ? {
          since: ch.failing_since ?? ch.last_error_at,
          failures,
          lastError: ch.last_error,
          lastErrorAt: ch.last_error_at,
        }
      : { since: null, failures: 0, lastError: null, lastErrorAt: null };
  if (ch.enabled !== 1) return { state: 'disabled', ...streak };
  if (failures === 0) return { state: 'healthy' };
  return { state: 'failing', ...streak };
}

/** Attempts listed on a channel's page. */
export const RECENT_ATTEMPTS = 10;

/**
 * Everything a channel's page shows: the channel (no secret), its latest attempts, and its dead letters waiting for a
 * re-send.
 */
export interface ChannelDetail {
  channel: ChannelSummary;
  attempts: ChannelAttempt[];
  deadLetters: number;
}

/** One channel's page, or undefined once it no longer exists. */
export async function channelDetail(deps: Deps, id: string): Promise<ChannelDetail | undefined> {
  const channel = await findChannelSummary(deps.db, id);
  if (!channel) return undefined;
  const [attempts, deadLetters] = await Promise.all([
    recentAttemptsOfChannel(deps.db, id, RECENT_ATTEMPTS),
    countResendableDead(deps.db, id),
  ]);
  return { channel, attempts, deadLetters };
}

/**
 * "Check connection": resolves the channel's host, applies the address policy, opens TCP and TLS as a delivery would,
 * and sends nothing. The result is for the admin's eyes only: never stored, never logged.
 */
export async function checkChannelConnection(deps: Deps, actor: AdminActor, id: string): Promise<CheckChannelResult> {
  const refused = await notAdmin(deps, actor);
  if (refused) return refused;
  const channel = await findChannel(deps.db, id);
  return channel
    ? { ok: true, check: await checkConnection(channel.url, deps.outbound) }
    : { ok: false, reason: 'not-found' };
}

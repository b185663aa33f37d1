// What the home page shows: the latest unread messages for everyone; for admins what needs attention and first steps.
import type { Deps } from '../../deps.ts';
import { listInboxMessages } from '../inbox/inbox.repo.ts';
import type { MessageRow } from '../messages/messages.repo.ts';
import { unreadCount } from '../messages/read-state.service.ts';
import { countDeadSince, failingChannels } from '../ops/ops.repo.ts';
import { countOpenInvitations, failingChannelRows, setupProgress, type FailingChannelRow } from './home.repo.ts';

/** Unread messages listed on the home page. */
export const HOME_UNREAD_ROWS = 5;
/** Failing channels listed by name on the home page (the count covers the rest). */
export const HOME_FAILING_ROWS = 5;
/** Counts on the home page stop here and read "1000+". */
export const HOME_COUNT_CAP = 1000;
/** Dead letters count on the home page when they happened within this window. */
const DEAD_WINDOW_MS = 24 * 60 * 60 * 1000;

/** What needs an admin's attention now. */
export interface AdminAttention {
  failing: { count: number; rows: FailingChannelRow[] };
  deadLastDay: number;
  openInvitations: number;
  /** First steps not taken yet, in order; empty once all are done. */
  todo: ('channel' | 'sso' | 'invite')[];
}

/** The home page's content for one account. */
export interface HomeView {
  unread: { count: number; latest: MessageRow[] };
  admin?: AdminAttention;
}

/** The home page for an account: a few bounded reads, the admin part only for admins. */
export async function homeView(deps: Deps, account: { id: string; role: 'admin' | 'viewer' }): Promise<HomeView> {
  const [count, latest, admin] = await Promise.all([
    unreadCount(deps, account.id),
    listInboxMessages(deps.db, { accountId: account.id, filter: { unreadOnly: true }, limit: HOME_UNREAD_ROWS }),
    account.role === 'admin' ? adminAttention(deps) : Promise.resolve(undefined),
  ]);
  return { unread: { count, latest }, admin };
}

async function adminAttention(deps: Deps): Promise<AdminAttention> {
  const now = deps.clock.now();
  const [failingCount, failingRows, deadLastDay, openInvitations, progress] = await Promise.all([
    failingChannels(deps.db, HOME_COUNT_CAP),
    failingChannelRows(deps.db, HOME_FAILING_ROWS),
    countDeadSince(deps.db, now - DEAD_WINDOW_MS, HOME_COUNT_CAP),
    countOpenInvitations(deps.db, now, HOME_COUNT_CAP),
    setupProgress(deps.db),
  ]);
  const todo: AdminAttention['todo'] = [];
  if (!progress.channel) todo.push('channel');
  if (!progress.sso) todo.push('sso');
  if (!progress.invited) todo.push('invite');
  return { failing: { count: failingCount, rows: failingRows }, deadLastDay, openInvitations, todo };
}

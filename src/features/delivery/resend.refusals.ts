// The re-send acts' refusals: the words the page's notice, the JSON API's `detail` and every other door show, and the
// API's status and problem type. A reason without words does not compile.
import { NOT_ADMIN, type Refusal } from '../refusals.ts';
import type { ResendAllResult, ResendRefusal } from './resend.service.ts';

export const RESEND_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': { words: 'That delivery no longer exists.', status: 404, type: 'not-found' },
  'not-undelivered': {
    words: 'Only a dead-lettered or cancelled delivery can be re-sent; this one is pending or already delivered.',
    status: 409,
    type: 'not-undelivered',
  },
  'already-resent': { words: 'This delivery has already been re-sent.', status: 409, type: 'already-resent' },
  'channel-deleted': {
    words: 'Its channel has been deleted, so there is nowhere to send it.',
    status: 409,
    type: 'channel-deleted',
  },
  'channel-disabled': {
    words: 'Its channel is disabled. Enable the channel first, then re-send.',
    status: 409,
    type: 'channel-disabled',
  },
} satisfies Record<ResendRefusal, Refusal>;

export const RESEND_ALL_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'not-found': { words: 'There is no channel with this id.', status: 404, type: 'not-found' },
  'channel-disabled': RESEND_REFUSALS['channel-disabled'],
} satisfies Record<Extract<ResendAllResult, { ok: false }>['reason'], Refusal>;

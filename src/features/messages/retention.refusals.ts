// The retention dial's refusals: the words Settings shows beside the field and the JSON API names in `errors` (or as
// the problem's `detail`). A reason without words does not compile.
import { NOT_ADMIN, type Refusal } from '../refusals.ts';
import { RETENTION_MAX_DAYS, RETENTION_MIN_DAYS, type SetRetentionResult } from './retention.service.ts';

type Reason = Extract<SetRetentionResult, { ok: false }>['reason'];

export const RETENTION_REFUSALS = {
  'not-admin': NOT_ADMIN,
  'out-of-range': {
    words: `Enter a whole number of days from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}.`,
    status: 400,
    field: 'days',
  },
} satisfies Record<Reason, Refusal>;

// Emitting's refusals beside its field errors (those name each field in the validation's own words): the words the
// JSON API's problem and `svc emit` say. A reason without words does not compile.
import { NOT_ADMIN, type Refusal } from '../refusals.ts';
import type { EmitResult } from './emit.service.ts';
import type { EmitOnceResult } from './idempotency.service.ts';

type Reason = Exclude<Extract<EmitResult | EmitOnceResult, { ok: false }>['reason'], 'invalid' | 'key-reused'>;

export const EMIT_REFUSALS = {
  'not-admin': NOT_ADMIN,
} satisfies Record<Reason, Refusal>;

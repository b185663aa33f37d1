// Emitting with an Idempotency-Key (POST /api/messages): the first answer per (account, key) is kept for 24 hours, so
// a client that retries after a lost answer gets that answer again and nothing new is stored. The key row and the
// message are written in one transaction: a second request with the same key waits on the first's row, then replays it.
import type { Deps } from '../../deps.ts';
import { sha256 } from '../../deps.ts';
import { actorIsAdmin } from '../auth/admin-actor.ts';
import { prepareEmit, runEmitTransaction, storeMessage, type EmitField, type EmitInput } from './emit.service.ts';
import { claimKey, deleteKeysThrough, findKey, saveAnswer } from './idempotency.repo.ts';
import type { MessageRow } from './messages.repo.ts';

/** How long a key holds its first answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** An emit request as the client sent it: `instant` absent means "now", decided after the request is fingerprinted. */
export type EmitRequest = Omit<EmitInput, 'instant'> & { instant?: number };

/** An answer as stored and replayed: its status and body text. */
export interface StoredAnswer {
  status: number;
  response: string;
}

/** The answer to give (new or replayed), or why nothing was stored. */
export type EmitOnceResult =
  | ({ ok: true; replayed: boolean } & StoredAnswer)
  | { ok: false; reason: 'invalid'; errors: Partial<Record<EmitField, string>> }
  | { ok: false; reason: 'key-reused' }
  | { ok: false; reason: 'not-admin' };

/**
 * The request's fingerprint: SHA-256 over its fields in a fixed order, absent optional fields as null. Key order and
 * whitespace of the JSON the client sent do not matter, and neither does how it spelled the same instant.
 */
export function requestHash(request: EmitRequest): string {
  const r = request;
  return sha256(
    JSON.stringify([
      r.cause,
      r.subject.kind,
      r.subject.key,
      r.instant ?? null,
      r.headline,
      r.census ?? null,
      r.sourceId ?? null,
      r.seedId ?? null,
    ]),
  );
}

/**
 * Emits `request` as emit() does and answers with `answer(message, deliveries)`. With a `key`, the first answer is
 * stored with the message in one transaction: the same key and request from the same account within 24 hours
 * replays it and stores nothing; the same key with another request is refused. As emit(), it refuses an actor that is
 * not an active administrator (replaying nothing either). Invalid input stores nothing, key included, so the client
 * may fix the request and retry with the same key.
 */
export async function emitOnce(
  deps: Deps,
  p: {
    /** The account emitting (the API token's); its keys are its own. */
    actorId: string;
    key: string | undefined;
    request: EmitRequest;
    answer: (message: MessageRow, deliveries: number) => StoredAnswer;
  },
): Promise<EmitOnceResult> {
  if (!(await actorIsAdmin(deps, { actorId: p.actorId }))) return { ok: false, reason: 'not-admin' };
  const now = deps.clock.now();
  const prepared = prepareEmit(deps, { ...p.request, instant: p.request.instant ?? now });
  if (!prepared.ok) return prepared;
  const { message } = prepared;
  const key = p.key;
  if (key === undefined) {
    return runEmitTransaction(deps, async (trx) => {
      const deliveries = await storeMessage(trx, deps, message);
      return { value: { ok: true, replayed: false, ...p.answer(message, deliveries) }, deliveries };
    });
  }
  const hash = requestHash(p.request);
  return runEmitTransaction<EmitOnceResult>(deps, async (trx) => {
    // The claim comes first, so a racing request with the same key waits here rather than storing a message.
    const claimed = await claimKey(
      trx,
      { account_id: p.actorId, key, request_hash: hash, status: 0, response: '', created_at: now },
      now - IDEMPOTENCY_TTL_MS,
    );
    if (!claimed) {
      const first = await findKey(trx, p.actorId, key);
      // A live row that did not let itself be claimed is locked by this transaction until it ends.
      if (!first) throw new Error('an idempotency key row vanished while held');
      if (first.request_hash !== hash) return { value: { ok: false, reason: 'key-reused' }, deliveries: 0 };
      return { value: { ok: true, replayed: true, status: first.status, response: first.response }, deliveries: 0 };
    }
    const deliveries = await storeMessage(trx, deps, message);
    const answer = p.answer(message, deliveries);
    await saveAnswer(trx, { accountId: p.actorId, key, ...answer });
    return { value: { ok: true, replayed: false, ...answer }, deliveries };
  });
}

/** Deletes keys older than 24 hours (housekeeping); returns how many. */
export function pruneIdempotencyKeys(deps: Deps): Promise<number> {
  return deleteKeysThrough(deps.db, deps.clock.now() - IDEMPOTENCY_TTL_MS);
}

// The team's accounts over the JSON API, admin-only (reads included): the list, one account's facts, and every act of
// its console page, each calling the same domain function as the page and refused for the same reasons (one table).
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Deps } from '../../deps.ts';
import { apiAccount, apiApp, badCursor, invalid, iso, pageFrom, problem, timeIdCursor, type FieldError } from '../../http/api.ts';
import type { Ctx } from '../../http/env.ts';
import { externalOrigin } from '../../http/request.ts';
import { isId } from '../../http/text.ts';
import { accountOperations as op, NO_ACCOUNT } from './accounts.api.schema.ts';
import { toAccount, toAccountDetail } from './team.api.schema.ts';
import {
  changeRole,
  findAccount,
  listAccountsAfter,
  loadAccount,
  mintResetLink,
  reactivateAccount,
  reassignAuthored,
  reenrolSecondFactor,
  removeAccount,
  revokeAllTokens,
  REVOKE_TOKENS_REFUSALS,
  signOutEverywhere,
  suspendAccount,
} from './team.service.ts';

/** One refusal: a problem (status, type, detail), or a 422 on one field. */
type Refusal = { status: ContentfulStatusCode; type: string; detail: string } | { field: string; in: FieldError['in']; detail: string };

const PROMOTE_FIRST = 'Promote another account to admin first.';

/** Every refusal of the account acts, by `act:reason` (or by reason for all acts); the console says the same. */
const REFUSALS: Record<string, Refusal> = {
  'not-found': { status: 404, type: 'not-found', detail: NO_ACCOUNT },
  'not-admin': { status: 403, type: 'admin-only', detail: 'This act is for administrators.' },
  'role:self': { status: 409, type: 'own-role', detail: 'You cannot change your own role. Another administrator can.' },
  'role:reauth-required': { status: 403, type: 'confirmation-required', detail: 'Making an account an administrator needs a token that is not read-only, of an active account.' },
  'role:last-admin': { status: 409, type: 'last-admin', detail: `That would leave no active administrator. ${PROMOTE_FIRST}` },
  'suspend:self': { status: 409, type: 'own-account', detail: 'You cannot suspend your own account.' },
  'suspend:last-admin': { status: 409, type: 'last-admin', detail: `That is the last active administrator. ${PROMOTE_FIRST}` },
  'sign-out:self': { status: 409, type: 'own-account', detail: 'End your own sessions from the Sessions section of your Profile.' },
  'revoke-tokens:self': { status: 409, type: 'own-account', detail: `${REVOKE_TOKENS_REFUSALS.self} Over the API: DELETE /api/tokens/{id}.` },
  'reenrol:self': { status: 409, type: 'own-account', detail: 'You cannot reset your own second factor. Another administrator can.' },
  'reset-link:self': { status: 409, type: 'own-account', detail: 'You cannot create a reset link for your own account. Change your password on your Profile.' },
  'reset-link:reauth-required': { status: 403, type: 'confirmation-required', detail: 'A reset link needs a token that is not read-only, of an active account.' },
  'reassign:same': { field: 'to', in: 'body', detail: 'Choose another account to receive the records.' },
  'reassign:heir-not-found': { field: 'to', in: 'body', detail: NO_ACCOUNT },
  'reassign:heir-suspended': { status: 409, type: 'heir-suspended', detail: 'The account chosen to receive the records is suspended. Choose an active account.' },
  'remove:self': { status: 409, type: 'own-account', detail: 'You cannot remove your own account.' },
  'remove:last-admin': { status: 409, type: 'last-admin', detail: `That is the last active administrator. ${PROMOTE_FIRST}` },
  'remove:confirmation': { field: 'confirm', in: 'query', detail: 'The confirmation did not match the username exactly, so nothing was removed.' },
  'remove:author': {
    status: 409,
    type: 'has-authored-records',
    detail: 'This account authored records (such as invitations), so the database keeps it. Reassign them (POST /api/accounts/{id}/reassign), or keep the account and demote it to viewer to retire it.',
  },
};

/** The problem answering a domain refusal of `act`. */
function refuse(c: Ctx, act: string, reason: string) {
  const refusal = REFUSALS[`${act}:${reason}`] ?? REFUSALS[reason];
  if (!refusal) throw new Error(`no refusal mapped for ${act}:${reason}`);
  return 'field' in refusal ? invalid(c, { [refusal.field]: refusal.detail }, refusal.in) : problem(c, refusal.status, refusal.type, refusal.detail);
}

/** The /api/accounts routes, mounted by app.ts. */
export function accountsApiRoutes(deps: Deps) {
  const app = apiApp();
  /** The account after an act, read afresh (404 when it went meanwhile). */
  const changed = async (c: Ctx, id: string, wasChanged: boolean) => {
    const account = await findAccount(deps, id);
    return account ? c.json({ changed: wasChanged, account: toAccount(account) }, 200) : refuse(c, 'act', 'not-found');
  };
  const log = (c: Ctx, event: string, account: string) => deps.log.info({ event, account, actor: apiAccount(c).id, via: 'api' }, event.replaceAll('-', ' '));

  app.openapi(op.list, async (c) => {
    const { cursor, limit, role, state } = c.req.valid('query');
    const after = cursor === undefined ? undefined : timeIdCursor(cursor);
    if (after === null) return badCursor(c);
    const rows = await listAccountsAfter(deps, { after: after && { createdAt: after.at, id: after.id }, limit: limit + 1, role, state });
    const page = pageFrom(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return c.json({ items: page.rows.map(toAccount), next_cursor: page.next_cursor }, 200);
  });

  app.openapi(op.one, async (c) => {
    const detail = await loadAccount(deps, c.req.valid('param').id);
    return detail ? c.json(toAccountDetail(detail), 200) : refuse(c, 'read', 'not-found');
  });

  app.openapi(op.setRole, async (c) => {
    const { id } = c.req.valid('param');
    const { id: actorId, tokenId } = apiAccount(c);
    const result = await changeRole(deps, { actorId, via: 'token', tokenId, targetId: id, role: c.req.valid('json').role });
    if (!result.ok) return refuse(c, 'role', result.reason);
    if (result.changed) log(c, 'role-changed', id);
    return changed(c, id, result.changed);
  });

  app.openapi(op.suspend, async (c) => {
    const { id } = c.req.valid('param');
    const result = await suspendAccount(deps, { actorId: apiAccount(c).id, accountId: id });
    if (!result.ok) return refuse(c, 'suspend', result.reason);
    if (result.changed) log(c, 'account-suspended', id);
    return changed(c, id, result.changed);
  });

  app.openapi(op.reactivate, async (c) => {
    const { id } = c.req.valid('param');
    const result = await reactivateAccount(deps, { actorId: apiAccount(c).id, accountId: id });
    if (!result.ok) return refuse(c, 'reactivate', result.reason);
    if (result.changed) log(c, 'account-reactivated', id);
    return changed(c, id, result.changed);
  });

  app.openapi(op.signOut, async (c) => {
    const result = await signOutEverywhere(deps, { actorId: apiAccount(c).id, accountId: c.req.valid('param').id });
    return result.ok ? c.json({ sessions_ended: result.ended }, 200) : refuse(c, 'sign-out', result.reason);
  });

  app.openapi(op.revokeTokens, async (c) => {
    const result = await revokeAllTokens(deps, { actorId: apiAccount(c).id, accountId: c.req.valid('param').id });
    return result.ok ? c.json({ tokens_revoked: result.revoked }, 200) : refuse(c, 'revoke-tokens', result.reason);
  });

  app.openapi(op.resetSecondFactor, async (c) => {
    const { id } = c.req.valid('param');
    const result = await reenrolSecondFactor(deps, { actorId: apiAccount(c).id, targetId: id });
    if (!result.ok) return refuse(c, 'reenrol', result.reason);
    log(c, 'second-factor-reset', id);
    const account = await findAccount(deps, id);
    return account ? c.json(toAccount(account), 200) : refuse(c, 'reenrol', 'not-found');
  });

  app.openapi(op.resetLink, async (c) => {
    const { id: actorId, tokenId } = apiAccount(c);
    const input = { actorId, via: 'token', tokenId, accountId: c.req.valid('param').id, base: externalOrigin(c, deps.config) } as const;
    const minted = await mintResetLink(deps, input);
    if (!minted.ok) return refuse(c, 'reset-link', minted.reason);
    return c.json({ reset_link: minted.url, expires_at: iso(minted.expiresAt), account_suspended: minted.suspended }, 201);
  });

  app.openapi(op.reassign, async (c) => {
    const { to } = c.req.valid('json');
    const result = await reassignAuthored(deps, { fromId: c.req.valid('param').id, toId: to });
    if (!result.ok) return refuse(c, 'reassign', result.reason);
    return c.json({ moved: result.moved, to: { id: to, username: result.to } }, 200);
  });

  app.openapi(op.remove, async (c) => {
    const { id } = c.req.valid('param');
    // An id of another shape names no account: nothing to remove.
    if (!isId(id)) return c.body(null, 204);
    const result = await removeAccount(deps, { actorId: apiAccount(c).id, targetId: id, confirmation: c.req.valid('query').confirm });
    if (!result.ok && result.reason !== 'not-found') return refuse(c, 'remove', result.reason);
    if (result.ok) log(c, 'account-removed', id);
    return c.body(null, 204);
  });

  return app;
}

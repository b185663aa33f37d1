// The team's accounts over the JSON API, admin-only (reads included): the list, one account's facts, and every act of
// its console page, each calling the same domain function as the page and refused for the same reasons (one table).
import type { Deps } from '../../deps.ts';
import {
  apiAccount,
  apiApp,
  badCursor,
  invalid,
  iso,
  pageFrom,
  problem,
  timeIdCursor,
  type FieldError,
} from '../../http/api.ts';
import type { Ctx } from '../../http/env.ts';
import { externalOrigin } from '../../http/request.ts';
import { isId } from '../../http/text.ts';
import { accountOperations as op, NO_ACCOUNT } from './accounts.api.schema.ts';
import { toAccount, toAccountDetail } from './team.api.schema.ts';
import { wordsOf, type Refusal } from '../refusals.ts';
import {
  REACTIVATE_REFUSALS,
  REASSIGN_REFUSALS,
  REENROL_REFUSALS,
  REMOVE_REFUSALS,
  RESET_LINK_REFUSALS,
  ROLE_REFUSALS,
  SIGN_OUT_REFUSALS,
  SUSPEND_REFUSALS,
  REVOKE_TOKENS_REFUSALS,
  type TeamFacts,
} from './team.refusals.ts';
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
  signOutEverywhere,
  suspendAccount,
} from './team.service.ts';

/** Where each act's refused field travels: the remove confirmation in the query, the heir in the body. */
const FIELD_IN: Record<string, FieldError['in']> = { confirm: 'query', to: 'body' };

/** The problem answering a domain refusal, from the act's catalogue: on its field (422), else a problem of its own. */
function refuse<R extends string>(c: Ctx, catalogue: Record<R, Refusal<TeamFacts>>, reason: R, username = '') {
  const refusal: Refusal<TeamFacts> = catalogue[reason];
  const detail = wordsOf(refusal, { username, via: 'token' });
  if (refusal.field !== undefined) return invalid(c, { [refusal.field]: detail }, FIELD_IN[refusal.field] ?? 'body');
  return problem(c, refusal.status, refusal.type ?? reason, detail);
}

/** The /api/accounts routes, mounted by app.ts. */
export function accountsApiRoutes(deps: Deps) {
  const app = apiApp();
  /** The account after an act, read afresh (404 when it went meanwhile). */
  const changed = async (c: Ctx, id: string, wasChanged: boolean) => {
    const account = await findAccount(deps, id);
    return account
      ? c.json({ changed: wasChanged, account: toAccount(account) }, 200)
      : refuse(c, REACTIVATE_REFUSALS, 'not-found');
  };
  const log = (c: Ctx, event: string, account: string, more: object = {}) =>
    deps.log.info({ event, account, actor: apiAccount(c).id, via: 'api', ...more }, event.replaceAll('-', ' '));

  app.openapi(op.list, async (c) => {
    const { cursor, limit, role, state } = c.req.valid('query');
    const after = cursor === undefined ? undefined : timeIdCursor(cursor);
    if (after === null) return badCursor(c);
    const rows = await listAccountsAfter(deps, {
      after: after && { createdAt: after.at, id: after.id },
      limit: limit + 1,
      role,
      state,
    });
    const page = pageFrom(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return c.json({ items: page.rows.map(toAccount), next_cursor: page.next_cursor }, 200);
  });

  app.openapi(op.one, async (c) => {
    const detail = await loadAccount(deps, c.req.valid('param').id);
    return detail ? c.json(toAccountDetail(detail), 200) : problem(c, 404, 'not-found', NO_ACCOUNT);
  });

  app.openapi(op.setRole, async (c) => {
    const { id } = c.req.valid('param');
    const { id: actorId, tokenId } = apiAccount(c);
    const result = await changeRole(deps, {
      actorId,
      via: 'token',
      tokenId,
      targetId: id,
      role: c.req.valid('json').role,
    });
    if (!result.ok) return refuse(c, ROLE_REFUSALS, result.reason);
    if (result.changed) log(c, 'role-changed', id);
    return changed(c, id, result.changed);
  });

  app.openapi(op.suspend, async (c) => {
    const { id } = c.req.valid('param');
    const result = await suspendAccount(deps, { actorId: apiAccount(c).id, accountId: id });
    if (!result.ok) return refuse(c, SUSPEND_REFUSALS, result.reason);
    if (result.changed) log(c, 'account-suspended', id);
    return changed(c, id, result.changed);
  });

  app.openapi(op.reactivate, async (c) => {
    const { id } = c.req.valid('param');
    const result = await reactivateAccount(deps, { actorId: apiAccount(c).id, accountId: id });
    if (!result.ok) return refuse(c, REACTIVATE_REFUSALS, result.reason);
    if (result.changed) log(c, 'account-reactivated', id);
    return changed(c, id, result.changed);
  });

  app.openapi(op.signOut, async (c) => {
    const result = await signOutEverywhere(deps, {
      actorId: apiAccount(c).id,
      accountId: c.req.valid('param').id,
      revokeTokens: c.req.valid('json').revoke_tokens === true,
    });
    return result.ok
      ? c.json({ sessions_ended: result.ended, tokens_revoked: result.revoked }, 200)
      : refuse(c, SIGN_OUT_REFUSALS, result.reason);
  });

  app.openapi(op.revokeTokens, async (c) => {
    const result = await revokeAllTokens(deps, { actorId: apiAccount(c).id, accountId: c.req.valid('param').id });
    return result.ok
      ? c.json({ tokens_revoked: result.revoked }, 200)
      : refuse(c, REVOKE_TOKENS_REFUSALS, result.reason);
  });

  app.openapi(op.resetSecondFactor, async (c) => {
    const { id } = c.req.valid('param');
    const result = await reenrolSecondFactor(deps, { actorId: apiAccount(c).id, targetId: id });
    if (!result.ok) return refuse(c, REENROL_REFUSALS, result.reason);
    log(c, 'second-factor-reset', id, { cleared: result.cleared });
    const account = await findAccount(deps, id);
    return account ? c.json(toAccount(account), 200) : refuse(c, REENROL_REFUSALS, 'not-found');
  });

  app.openapi(op.resetLink, async (c) => {
    const { id: actorId, tokenId } = apiAccount(c);
    const input = {
      actorId,
      via: 'token',
      tokenId,
      accountId: c.req.valid('param').id,
      base: externalOrigin(c, deps.config),
    } as const;
    const minted = await mintResetLink(deps, input);
    if (!minted.ok) return refuse(c, RESET_LINK_REFUSALS, minted.reason);
    return c.json(
      { reset_link: minted.url, expires_at: iso(minted.expiresAt), account_suspended: minted.suspended },
      201,
    );
  });

  app.openapi(op.reassign, async (c) => {
    const { to } = c.req.valid('json');
    const result = await reassignAuthored(deps, {
      actorId: apiAccount(c).id,
      fromId: c.req.valid('param').id,
      toId: to,
    });
    if (!result.ok) return refuse(c, REASSIGN_REFUSALS, result.reason);
    return c.json({ moved: result.moved, to: { id: to, username: result.to } }, 200);
  });

  app.openapi(op.remove, async (c) => {
    const { id } = c.req.valid('param');
    // An id of another shape names no account: nothing to remove.
    if (!isId(id)) return c.body(null, 204);
    const result = await removeAccount(deps, {
      actorId: apiAccount(c).id,
      targetId: id,
      confirmation: c.req.valid('query').confirm,
    });
    if (!result.ok && result.reason !== 'not-found')
      return refuse(c, REMOVE_REFUSALS, result.reason, result.reason === 'author' ? result.username : '');
    if (result.ok) log(c, 'account-removed', id);
    return c.body(null, 204);
  });

  return app;
}

// One account's page and its acts under /settings/accounts (the gate makes every /settings route admin-only).
// Every act answers with a redirect to the page and a notice (POST/redirect/GET); a refusal renders the page in-band.
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { signedIn, type AppEnv, type Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { errorPage } from '../../http/render.tsx';
import type { RenderSettings } from '../../http/views/settings.ts';
import { clientAddress, externalOrigin } from '../../http/request.ts';
import { revealLater, revealNow, spendOnce } from '../auth/reveal.tsx';
import { isId } from '../../http/text.ts';
import { confirmIdentity, recentlyConfirmed } from '../second-factor/reauth.service.ts';
import { confirmRefusal } from '../second-factor/confirm-step.tsx';
import { wordsOf, type Refusal } from '../refusals.ts';
import { CONFIRMABLE } from './account-confirm.views.tsx';
import { ACCOUNT_NOTICES, AccountPage, type AccountPageProps } from './account.views.tsx';
import type { AccountDetail } from './accounts-lifecycle.service.ts';
import {
  REACTIVATE_REFUSALS,
  REASSIGN_REFUSALS,
  REENROL_REFUSALS,
  REMOVE_REFUSALS,
  RESET_LINK_REFUSALS,
  REVOKE_TOKENS_REFUSALS,
  ROLE_REFUSALS,
  SIGN_OUT_REFUSALS,
  SUSPEND_REFUSALS,
  type TeamFacts,
} from './team.refusals.ts';
import { renderTeamTab } from './team.tab.tsx';
import {
  changeRole,
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

const id = idField('Choose an account.');
const accountSchema = z.object({ account: id });
const roleSchema = z.object({
  account: id,
  role: z.enum(['admin', 'viewer'], { error: 'Choose the role admin or viewer.' }),
});
/** An unticked checkbox is absent from the form. */
const signOutSchema = z.object({
  account: id,
  revoke_tokens: z
    .string()
    .optional()
    .transform((v) => v !== undefined),
});
const removeSchema = z.object({ account: id, confirm: z.string().default('') });
const reassignSchema = z.object({ account: id, to: idField('Choose the account that receives the records.') });
const reauthSchema = z.object({
  secret: z.string().max(1024).default(''),
  account: z.string().default(''),
  at: z.string().default(''),
});

/** The account page's address, with a notice key. */
const pageOf = (accountId: string, notice?: string) =>
  `/settings/accounts/${accountId}${notice ? `?notice=${notice}` : ''}`;
/** The account page that shows a reset link just minted, once (later visits of it say it was shown). */
const revealPageOf = (accountId: string) => `/settings/accounts/${accountId}?reveal=reset-link#reset-link-result`;
/** The reveal kind of one account's reset link. */
const resetReveal = (accountId: string) => `reset-link:${accountId}`;

export function accountRoutes(deps: Deps, renderSettings: RenderSettings) {
  const app = new Hono<AppEnv>();
  const selfId = (c: Ctx) => signedIn(c).account.id;

  const gone = (c: Ctx) => errorPage(c, 404, 'Account not found', wordsOf(REMOVE_REFUSALS['not-found'], undefined));

  /**
   * The account page in the settings frame; its reset link asks "Confirm it's you" first unless this session did
   * lately.
   */
  const show = async (
    c: Ctx,
    detail: AccountDetail,
    status: ContentfulStatusCode,
    extra: Omit<AccountPageProps, 'detail' | 'selfId'>,
  ) => {
    const session = signedIn(c);
    const owed =
      extra.reauth ??
      ((await recentlyConfirmed(deps, session.idHash)) ? undefined : { withCode: session.account.totp_enabled === 1 });
    const body = <AccountPage detail={detail} selfId={selfId(c)} {...extra} reauth={owed} />;
    return renderSettings(c, 'team', body, status);
  };

  /** The account page, read afresh; 404 when the account is gone. */
  const page = async (
    c: Ctx,
    accountId: string,
    status: ContentfulStatusCode,
    extra: Omit<AccountPageProps, 'detail' | 'selfId'>,
  ) => {
    const detail = await loadAccount(deps, accountId);
    return detail ? show(c, detail, status, extra) : gone(c);
  };

  /**
   * A refusal from the act's catalogue, on the account's page (or a page of its own when the account is gone or the
   * actor is no administrator). One on a field of the page's forms sits beside it; the others head the page.
   */
  const refuse = <R extends string>(
    c: Ctx,
    accountId: string,
    catalogue: Record<R, Refusal<TeamFacts>>,
    reason: R,
    username = '',
  ) => {
    const refusal: Refusal<TeamFacts> = catalogue[reason];
    const words = wordsOf(refusal, { username, via: 'session' });
    if (reason === 'not-admin') return errorPage(c, refusal.status, 'Not allowed', words);
    if (reason === 'not-found') return errorPage(c, refusal.status, 'Account not found', words);
    return page(
      c,
      accountId,
      refusal.status,
      refusal.field === 'confirm' ? { errors: { confirm: words } } : { error: words },
    );
  };

  /** A form that did not validate: on the account's page when its id is well formed, else on the team tab. */
  const invalid = async (c: Ctx, errors: Record<string, string>) => {
    const accountId = c.get('form')?.get('account');
    if (!isId(accountId) || errors.account) {
      const body = await renderTeamTab(deps, c, { error: errors.account ?? Object.values(errors)[0] });
      return renderSettings(c, 'team', body, 400);
    }
    // A field of a form on the page (role, confirm) is marked at its field; anything else heads the page.
    const onPage = Object.keys(errors).every((k) => k === 'role' || k === 'confirm');
    return page(c, accountId, 400, onPage ? { errors } : { error: Object.values(errors)[0] });
  };

  app.get('/settings/accounts/:id', refuseControlQuery, async (c) => {
    const accountId = c.req.param('id');
    const detail = isId(accountId) ? await loadAccount(deps, accountId) : undefined;
    if (!detail) return gone(c);
    const key = c.req.query('notice') ?? '';
    const notice = Object.hasOwn(ACCOUNT_NOTICES, key) ? ACCOUNT_NOTICES[key] : undefined;
    // The page the mint redirected to (`?reveal=reset-link`) shows the link once; a reload or Back says it was shown.
    const revealing = c.req.query('reveal') === 'reset-link';
    const resetLink = revealing ? await revealNow(c, resetReveal(accountId)) : undefined;
    const resetLinkGone = revealing && resetLink === undefined;
    return show(c, detail, 200, {
      notice,
      noticeKey: notice === undefined ? undefined : key,
      resetLink,
      resetLinkGone,
      confirm: confirmStep(c, detail),
    });
  });

  /** The confirmation step asked for by `?confirm=` (and `&to=` for a move), when it applies to this account. */
  const confirmStep = (c: Ctx, detail: AccountDetail): AccountPageProps['confirm'] => {
    const act = CONFIRMABLE.find((a) => a === c.req.query('confirm'));
    if (!act || detail.account.id === selfId(c)) return undefined;
    if (act !== 'reassign') return { act };
    const heir = detail.heirs.find((h) => h.id === c.req.query('to'));
    return heir ? { act, heir } : undefined;
  };

  app.post('/settings/accounts/role', async (c) => {
    const form = parseForm(c, roleSchema);
    if (!form.ok) return invalid(c, form.errors);
    const session = signedIn(c);
    const result = await changeRole(deps, {
      actorId: session.account.id,
      sessionIdHash: session.idHash,
      targetId: form.data.account,
      role: form.data.role,
    });
    if (result.ok)
      return c.redirect(pageOf(form.data.account, result.changed ? 'role-changed' : 'role-unchanged'), 303);
    return refuse(c, form.data.account, ROLE_REFUSALS, result.reason);
  });

  app.post('/settings/accounts/reenroll', async (c) => {
    const form = parseForm(c, accountSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await reenrolSecondFactor(deps, { actorId: selfId(c), targetId: form.data.account });
    if (!result.ok) return refuse(c, form.data.account, REENROL_REFUSALS, result.reason);
    deps.log.info(
      { event: 'second-factor-reset', account: form.data.account, cleared: result.cleared },
      'second factor reset by an administrator',
    );
    return c.redirect(pageOf(form.data.account, 'reenrolled'), 303);
  });

  // Suspension and its undoing: one form each, the change logged when it happened, a notice either way.
  const STATE_ACTS = [
    { act: 'suspend', run: suspendAccount, notices: ['suspended', 'already-suspended'], event: 'account-suspended' },
    {
      act: 'reactivate',
      run: reactivateAccount,
      notices: ['reactivated', 'already-active'],
      event: 'account-reactivated',
    },
  ] as const;
  // Reactivation's refusals are suspension's shared ones (the same entries), so one table answers both.
  const stateRefusals = { ...REACTIVATE_REFUSALS, ...SUSPEND_REFUSALS };
  for (const { act, run, notices, event } of STATE_ACTS) {
    app.post(`/settings/accounts/${act}`, async (c) => {
      const form = parseForm(c, accountSchema);
      if (!form.ok) return invalid(c, form.errors);
      const result = await run(deps, { actorId: selfId(c), accountId: form.data.account });
      if (!result.ok) return refuse(c, form.data.account, stateRefusals, result.reason);
      if (result.changed)
        deps.log.info({ event, account: form.data.account, actor: selfId(c) }, event.replace('-', ' '));
      return c.redirect(pageOf(form.data.account, notices[result.changed ? 0 : 1]), 303);
    });
  }

  app.post('/settings/accounts/sign-out', async (c) => {
    const form = parseForm(c, signOutSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await signOutEverywhere(deps, {
      actorId: selfId(c),
      accountId: form.data.account,
      revokeTokens: form.data.revoke_tokens,
    });
    if (!result.ok) return refuse(c, form.data.account, SIGN_OUT_REFUSALS, result.reason);
    return c.redirect(pageOf(form.data.account, form.data.revoke_tokens ? 'signed-out-revoked' : 'signed-out'), 303);
  });

  app.post('/settings/accounts/revoke-tokens', async (c) => {
    const form = parseForm(c, accountSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await revokeAllTokens(deps, { actorId: selfId(c), accountId: form.data.account });
    if (!result.ok) return refuse(c, form.data.account, REVOKE_TOKENS_REFUSALS, result.reason);
    return c.redirect(pageOf(form.data.account, result.revoked > 0 ? 'tokens-revoked' : 'no-tokens'), 303);
  });

  // POST/redirect/GET: the link is held for this session and shown once by the account page after the redirect; a
  // second post of the same form (its one-time token spent) mints nothing and lands on that page too.
  app.post('/settings/accounts/reset-link', async (c) => {
    const form = parseForm(c, accountSchema);
    if (!form.ok) return invalid(c, form.errors);
    if (!(await spendOnce(c))) return c.redirect(revealPageOf(form.data.account), 303);
    const session = signedIn(c);
    const input = {
      actorId: session.account.id,
      sessionIdHash: session.idHash,
      accountId: form.data.account,
      base: externalOrigin(c, deps.config),
    };
    const minted = await mintResetLink(deps, input);
    if (!minted.ok) return refuse(c, form.data.account, RESET_LINK_REFUSALS, minted.reason);
    await revealLater(c, resetReveal(form.data.account), minted.url);
    return c.redirect(revealPageOf(form.data.account), 303);
  });

  // "Confirm it's you" for the admin acts that hand out lasting access (an admin invitation, a reset link): the
  // password or a current authenticator code opens this session's 10-minute window, counted against the per-session
  // limit of every re-confirmation. Back to the account page named by `account`, else to the team tab.
  app.post('/settings/accounts/reauth', async (c) => {
    const session = signedIn(c);
    const form = parseForm(c, reauthSchema);
    const accountId = form.ok ? form.data.account : form.values.account;
    const back = isId(accountId) ? accountId : undefined;
    // Which act of the account page asked: making an administrator (the Role section), else a reset link.
    const at = (form.ok ? form.data.at : form.values.at) === 'role' ? 'role' : 'reset-link';
    const withCode = session.account.totp_enabled === 1;
    const refuseWith = async (errors: Record<string, string>, status: ContentfulStatusCode) =>
      back
        ? page(c, back, status, { reauth: { withCode, errors, at } })
        : renderSettings(c, 'team', await renderTeamTab(deps, c, { confirmErrors: errors }), status);
    if (!form.ok) return refuseWith({ secret: form.errors.secret ?? 'Check the form and try again.' }, 400);
    const result = await confirmIdentity(deps, {
      accountId: session.account.id,
      sessionIdHash: session.idHash,
      secret: form.data.secret,
      address: clientAddress(c),
    });
    if (result.ok) {
      const place =
        at === 'role'
          ? `${pageOf(back ?? '', 'confirmed-role')}#account-role`
          : `${pageOf(back ?? '', 'confirmed')}#account-password`;
      return c.redirect(back ? place : '/settings?tab=team&notice=confirmed#invite', 303);
    }
    const refused = confirmRefusal(result, withCode);
    return refuseWith(refused.errors, refused.status);
  });

  app.post('/settings/accounts/reassign', async (c) => {
    const form = parseForm(c, reassignSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await reassignAuthored(deps, { actorId: selfId(c), fromId: form.data.account, toId: form.data.to });
    if (!result.ok) return refuse(c, form.data.account, REASSIGN_REFUSALS, result.reason);
    return c.redirect(pageOf(form.data.account, result.moved > 0 ? 'reassigned' : 'nothing-to-reassign'), 303);
  });

  app.post('/settings/accounts/remove', async (c) => {
    const form = parseForm(c, removeSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await removeAccount(deps, {
      actorId: selfId(c),
      targetId: form.data.account,
      confirmation: form.data.confirm,
    });
    if (result.ok) return c.redirect('/settings?tab=team&notice=removed', 303);
    return refuse(
      c,
      form.data.account,
      REMOVE_REFUSALS,
      result.reason,
      result.reason === 'author' ? result.username : '',
    );
  });

  return app;
}

// Admin team acts under /settings/accounts (the gate makes every /settings route admin-only).
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { errorPage, render } from '../../http/render.tsx';
import { externalOrigin } from '../../http/request.ts';
import { SettingsFrame } from '../settings/settings.views.tsx';
import { mintInvitation, revokeInvitation, type MintedInvitation } from './invitations.service.ts';
import { renderTeamTab } from './team.tab.tsx';
import { changeRole, reenrolSecondFactor, removeAccount } from './team.service.ts';

const role = z.enum(['admin', 'viewer'], { error: 'Choose the role admin or viewer.' });
const id = idField('Choose an account.');

const mintSchema = z.object({ role });
const roleSchema = z.object({ account: id, role });
const accountSchema = z.object({ account: id });
const removeSchema = z.object({ account: id, confirm: z.string().default('') });
const revokeSchema = z.object({ invitation: idField('Choose an invitation to revoke.') });

/** Every refusal of the team acts: status and the message shown on the page (SPEC 7). */
const REFUSALS: Record<string, [ContentfulStatusCode, (username: string) => string]> = {
  'self-role': [409, () => 'You cannot change your own role. Another administrator can.'],
  'last-admin-role': [409, () => 'That would leave no administrator. Promote another account first.'],
  'self-remove': [409, () => 'You cannot remove your own account.'],
  'last-admin-remove': [409, () => 'That is the last administrator. Promote another account first.'],
  'confirmation': [400, () => 'The confirmation did not match the username exactly, so nothing was removed.'],
  'author': [
    409,
    (username) =>
      `${username || 'This account'} authored records in this service (such as invitations), so the database keeps it. ` +
      'Reassign those records, or keep the account and demote it to viewer to retire it.',
  ],
  'not-found': [404, () => 'That account no longer exists.'],
};

export function teamRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  /** The settings page with the team tab, an error or a minted invitation, rendered in-band. */
  const page = async (c: Ctx, status: ContentfulStatusCode, extra: { error?: string; minted?: MintedInvitation }) =>
    render(c, 'Settings', <SettingsFrame current="team">{await renderTeamTab(deps, c, extra)}</SettingsFrame>, status);

  const refuse = (c: Ctx, key: string, username = '') => {
    if (key === 'not-admin') return errorPage(c, 403, 'Not allowed', 'This page is for administrators.');
    const [status, message] = REFUSALS[key]!;
    return page(c, status, { error: message(username) });
  };

  const invalid = (c: Ctx, errors: Record<string, string>) => page(c, 400, { error: Object.values(errors)[0] });
  const done = (c: Ctx, notice: string) => c.redirect(`/settings?tab=team&notice=${notice}`, 303);
  const actorId = (c: Ctx) => c.get('session')!.account.id;

  app.post('/settings/accounts', async (c) => {
    const form = parseForm(c, mintSchema);
    if (!form.ok) return invalid(c, form.errors);
    const minted = await mintInvitation(deps, { actorId: actorId(c), role: form.data.role, base: externalOrigin(c, deps.config) });
    // The link is in this response only (never in a URL), so it is not cached or kept in history.
    return page(c, 201, { minted });
  });

  app.post('/settings/accounts/role', async (c) => {
    const form = parseForm(c, roleSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await changeRole(deps, { actorId: actorId(c), targetId: form.data.account, role: form.data.role });
    if (result.ok) return done(c, result.changed ? 'role-changed' : 'role-unchanged');
    return refuse(c, result.reason === 'self' || result.reason === 'last-admin' ? `${result.reason}-role` : result.reason);
  });

  app.post('/settings/accounts/reenroll', async (c) => {
    const form = parseForm(c, accountSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await reenrolSecondFactor(deps, { actorId: actorId(c), targetId: form.data.account });
    if (!result.ok) return refuse(c, result.reason);
    deps.log.info({ event: 'second-factor-reset', account: form.data.account }, 'second factor reset by an administrator');
    return done(c, 'reenrolled');
  });

  app.post('/settings/accounts/remove', async (c) => {
    const form = parseForm(c, removeSchema);
    if (!form.ok) return invalid(c, form.errors);
    const input = { actorId: actorId(c), targetId: form.data.account, confirmation: form.data.confirm };
    const result = await removeAccount(deps, input);
    if (result.ok) return done(c, 'removed');
    if (result.reason === 'self' || result.reason === 'last-admin') return refuse(c, `${result.reason}-remove`);
    return refuse(c, result.reason, result.reason === 'author' ? result.username : '');
  });

  app.post('/settings/accounts/invitations/revoke', async (c) => {
    const form = parseForm(c, revokeSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await revokeInvitation(deps, form.data.invitation);
    return done(c, result.ok ? 'revoked' : 'not-pending');
  });

  return app;
}

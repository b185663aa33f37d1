// Invitation acts under /settings/accounts (the gate makes every /settings route admin-only). Each account's own acts
// (role, suspension, sign-out, reset link, second factor, reassignment, removal) are in account.routes.tsx.
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { signedIn, sessionActor, type AppEnv, type Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import type { RenderSettings } from '../../http/views/settings.ts';
import { externalOrigin } from '../../http/request.ts';
import { revealLater, spendOnce } from '../auth/reveal.tsx';
import { checkInvitationNote, mintInvitation, revokeInvitation } from './invitations.service.ts';
import { wordsOf, type Refusal } from '../refusals.ts';
import { MINT_INVITATION_REFUSALS, REVOKE_INVITATION_REFUSALS, type TeamFacts } from './team.refusals.ts';
import { INVITATION_REVEAL, INVITATION_REVEAL_PATH, renderTeamTab, type TeamTabExtra } from './team.tab.tsx';

const role = z.enum(['admin', 'viewer'], { error: 'Choose the role admin or viewer.' });

const mintSchema = z.object({ role, note: z.string().default('') });
const revokeSchema = z.object({ invitation: idField('Choose an invitation to revoke.') });

export function teamRoutes(deps: Deps, renderSettings: RenderSettings) {
  const app = new Hono<AppEnv>();

  /** The settings page with the team tab, an error or a form's errors, rendered in-band. */
  const page = async (c: Ctx, status: ContentfulStatusCode, extra: TeamTabExtra) =>
    renderSettings(c, 'team', await renderTeamTab(deps, c, extra), status);

  const invalid = (c: Ctx, errors: Record<string, string>) => page(c, 400, { error: Object.values(errors)[0] });
  const done = (c: Ctx, notice: string) => c.redirect(`/settings?tab=team&notice=${notice}`, 303);

  // POST/redirect/GET: the join link is held for this session and shown once on the page after the redirect. A second
  // post of the same form (its one-time token spent) mints nothing and lands on that page too. An admin invitation
  // without "Confirm it's you" in the last 10 minutes mints nothing: the tab answers with the confirm step.
  app.post('/settings/accounts', async (c) => {
    const form = parseForm(c, mintSchema);
    const note = form.ok ? checkInvitationNote(form.data.note) : undefined;
    if (!form.ok || !note?.ok) {
      const errors = form.ok ? { note: note && !note.ok ? note.message : 'Check the note.' } : form.errors;
      return page(c, 400, { invite: { values: form.ok ? form.data : form.values, errors } });
    }
    if (!(await spendOnce(c))) return c.redirect(INVITATION_REVEAL_PATH, 303);
    const session = signedIn(c);
    const minted = await mintInvitation(deps, {
      actorId: session.account.id,
      sessionIdHash: session.idHash,
      role: form.data.role,
      note: note.note ?? undefined,
      base: externalOrigin(c, deps.config),
    });
    if (!minted.ok) {
      const refusal: Refusal<TeamFacts> = MINT_INVITATION_REFUSALS[minted.reason];
      return page(c, refusal.status, { error: wordsOf(refusal, { username: '', via: 'session' }) });
    }
    await revealLater(c, INVITATION_REVEAL, JSON.stringify(minted));
    return c.redirect(INVITATION_REVEAL_PATH, 303);
  });

  app.post('/settings/accounts/invitations/revoke', async (c) => {
    const form = parseForm(c, revokeSchema);
    if (!form.ok) return invalid(c, form.errors);
    const result = await revokeInvitation(deps, sessionActor(c), form.data.invitation);
    if (result.ok) return done(c, result.changed ? 'revoked' : 'not-pending');
    const refusal: Refusal<TeamFacts> = REVOKE_INVITATION_REFUSALS[result.reason];
    return page(c, refusal.status, { error: wordsOf(refusal, { username: '', via: 'session' }) });
  });

  return app;
}

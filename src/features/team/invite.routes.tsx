// GET/POST /invite: the public acceptance of an invitation (pre-auth token, no session granted).
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { TOKEN_PAGE_REFERRER_POLICY } from '../../http/middleware.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { passwordField, usernameField } from '../auth/credentials.schema.ts';
import { acceptInvitation, openInvitation, usernameClash } from './invitations.service.ts';
import { InvitationInvalid, InvitePage } from './team.views.tsx';

// The role is deliberately absent: it comes from the invitation row, so the form cannot change it.
const acceptSchema = z.object({ token: z.string().default(''), username: usernameField, password: passwordField });

const TITLE = 'Join svc';

/** What the form says of a username the store would refuse. */
const CLASH_MESSAGE = {
  'username-taken': 'That username is taken. Choose another.',
  'username-lookalike': 'That username looks like an existing one. Choose another.',
} as const;

export function inviteRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  // The token sits in the URL: never send it onwards in a Referer header (only the origin goes).
  app.use('/invite', async (c, next) => {
    c.header('Referrer-Policy', TOKEN_PAGE_REFERRER_POLICY);
    await next();
  });

  const invalid = (c: Ctx) => render(c, 'Invitation invalid', <InvitationInvalid />, 410);

  app.get('/invite', refuseControlQuery, async (c) => {
    const token = c.req.query('token') ?? '';
    const opened = await openInvitation(deps, token);
    if (!opened.ok) return invalid(c);
    return render(c, TITLE, <InvitePage token={token} role={opened.role} />);
  });

  app.post('/invite', async (c) => {
    const token = c.get('form')?.get('token') ?? '';
    const opened = await openInvitation(deps, token);
    if (!opened.ok) return invalid(c);
    const form = parseForm(c, acceptSchema);
    if (!form.ok) {
      // Every problem at once: a username another account holds is named now, not after the password is fixed.
      const clash =
        form.errors.username === undefined ? await usernameClash(deps, form.values.username ?? '') : undefined;
      // The clash first, then the parser's errors in the schema's (the fields') order, as the summary lists them.
      const errors = { ...(clash ? { username: CLASH_MESSAGE[clash] } : {}), ...form.errors };
      return render(
        c,
        TITLE,
        <InvitePage token={token} role={opened.role} values={form.values} errors={errors} />,
        400,
      );
    }
    const result = await acceptInvitation(deps, form.data);
    if (result.ok) {
      deps.log.info(
        { event: 'invitation-accepted', account: result.accountId, role: result.role },
        'invitation accepted',
      );
      return c.redirect('/login?notice=invited', 303);
    }
    if (result.reason === 'invalid') return invalid(c);
    const errors = { username: CLASH_MESSAGE[result.reason] };
    return render(
      c,
      TITLE,
      <InvitePage token={token} role={opened.role} values={{ username: form.data.username }} errors={errors} />,
      409,
    );
  });

  return app;
}

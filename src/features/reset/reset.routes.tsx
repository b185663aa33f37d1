// GET/POST /reset: following an administrator's password reset link (pre-auth token, no session granted).
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv, Ctx } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { TOKEN_PAGE_REFERRER_POLICY } from '../../http/middleware.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { passwordField } from '../auth/credentials.schema.ts';
import { openResetLink, useResetLink, type OpenResetResult } from './reset.service.ts';
import { ResetInvalid, ResetPage, ResetSuspended } from './reset.views.tsx';

const resetSchema = z.object({ token: z.string().default(''), password: passwordField });

const TITLE = 'Choose a new password';

export function resetRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  // The token sits in the URL: never send it onwards in a Referer header (only the origin goes).
  app.use('/reset', async (c, next) => {
    c.header('Referrer-Policy', TOKEN_PAGE_REFERRER_POLICY);
    await next();
  });

  /** The one page for a link that cannot be used: invalid (whatever the cause) or its account suspended. */
  const refused = (c: Ctx, result: Exclude<OpenResetResult, { ok: true }>) =>
    result.reason === 'suspended'
      ? render(c, 'Account suspended', <ResetSuspended />, 403)
      : render(c, 'Reset link not valid', <ResetInvalid />, 410);

  app.get('/reset', refuseControlQuery, async (c) => {
    const token = c.req.query('token') ?? '';
    const opened = await openResetLink(deps, token);
    if (!opened.ok) return refused(c, opened);
    return render(c, TITLE, <ResetPage token={token} username={opened.username} />);
  });

  app.post('/reset', async (c) => {
    const token = c.get('form')?.get('token') ?? '';
    const opened = await openResetLink(deps, token);
    if (!opened.ok) return refused(c, opened);
    const form = parseForm(c, resetSchema);
    if (!form.ok)
      return render(c, TITLE, <ResetPage token={token} username={opened.username} errors={form.errors} />, 400);
    const result = await useResetLink(deps, form.data);
    if (!result.ok) return refused(c, result);
    deps.log.info({ event: 'password-reset', username: result.username }, 'password reset through a link');
    return c.redirect('/login?notice=password-reset', 303);
  });

  return app;
}

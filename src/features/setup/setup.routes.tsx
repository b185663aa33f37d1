// GET/POST /setup: the first-run form; afterwards it redirects to /login.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { AppEnv } from '../../http/env.ts';
import { parseForm } from '../../http/forms.ts';
import { TOKEN_PAGE_REFERRER_POLICY } from '../../http/middleware.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { render } from '../../http/render.tsx';
import { NewAccountFields } from '../auth/new-password-field.tsx';
import { Field, Form } from '../../http/views/components.tsx';
import { passwordField, usernameField } from '../auth/credentials.schema.ts';
import { completeSetup, setupOpen, setupTokenValid } from './setup.service.ts';

const setupSchema = z.object({
  token: z.string().default(''),
  username: usernameField,
  password: passwordField,
});

function SetupPage(props: {
  token: string;
  tokenOk: boolean;
  values?: Record<string, string>;
  errors?: Record<string, string>;
}) {
  const e = props.errors ?? {};
  return (
    <section class="narrow">
      <p class="lead">Create the first administrator account. It can invite everyone else.</p>
      <Form action="/setup" id="setup" errors={e}>
        {props.tokenOk ? (
          <input type="hidden" name="token" value={props.token} />
        ) : (
          <Field
            label="Setup token"
            name="token"
            autocomplete="off"
            required
            hint="Printed in the service's log at start-up."
          />
        )}
        <NewAccountFields username={props.values?.username} />
        <button type="submit">Create administrator</button>
      </Form>
    </section>
  );
}

export function setupRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.use('/setup', async (c, next) => {
    c.header('Referrer-Policy', TOKEN_PAGE_REFERRER_POLICY);
    if (!(await setupOpen(deps))) return c.redirect('/login', 303);
    await next();
  });

  app.get('/setup', refuseControlQuery, async (c) => {
    const token = c.req.query('token') ?? '';
    const tokenOk = await setupTokenValid(deps, token);
    const errors = token && !tokenOk ? { token: 'This setup token is not valid.' } : undefined;
    return render(c, 'Set up svc', <SetupPage token={token} tokenOk={tokenOk} errors={errors} />);
  });

  app.post('/setup', async (c) => {
    const form = parseForm(c, setupSchema);
    const token = c.get('form')?.get('token') ?? '';
    const tokenOk = await setupTokenValid(deps, token);
    // A racing post may have just completed setup (spending the generated token): that is "closed", not "bad token".
    if (!tokenOk && !(await setupOpen(deps))) return c.redirect('/login', 303);
    if (!form.ok || !tokenOk) {
      // The token's problem first, as its field comes first (the summary lists problems in this order).
      const tokenError: Record<string, string> = tokenOk ? {} : { token: 'This setup token is not valid.' };
      const errors = { ...tokenError, ...(form.ok ? {} : form.errors), ...tokenError };
      return render(
        c,
        'Set up svc',
        <SetupPage token={token} tokenOk={tokenOk} values={form.ok ? undefined : form.values} errors={errors} />,
        400,
      );
    }
    const result = await completeSetup(deps, form.data);
    if (!result.ok && result.reason === 'closed') return c.redirect('/login', 303);
    if (!result.ok) {
      return render(
        c,
        'Set up svc',
        <SetupPage token="" tokenOk={false} errors={{ token: 'This setup token is not valid.' }} />,
        400,
      );
    }
    deps.log.info({ event: 'setup-completed' }, 'first administrator account created');
    return c.redirect('/login?notice=setup-done', 303);
  });

  return app;
}

// GET /: the signed-in home page.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { render } from '../../http/render.tsx';

export function homeRoutes() {
  const app = new Hono<AppEnv>();
  app.get('/', (c) => {
    const account = c.get('session')!.account;
    return render(
      c,
      'Home',
      <section>
        <p class="lead">
          Signed in as <strong>{account.username}</strong> with the role <strong>{account.role}</strong>.
        </p>
        <ul class="links">
          <li>
            <a href="/inbox">Read your messages</a>
          </li>
          <li>
            <a href="/profile">Manage your password, second factor and API tokens</a>
          </li>
          {account.role === 'admin' ? (
            <li>
              <a href="/settings">Administer the team, single sign-on and channels</a>
            </li>
          ) : null}
        </ul>
      </section>,
    );
  });
  return app;
}

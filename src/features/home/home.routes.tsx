// GET /: the signed-in home page.
import { Hono } from 'hono';
import type { Deps } from '../../deps.ts';
import { signedIn, type AppEnv } from '../../http/env.ts';
import { render } from '../../http/render.tsx';
import { homeView } from './home.service.ts';
import { HomeBody } from './home.views.tsx';

/** The home page routes. */
export function homeRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  app.get('/', async (c) => {
    const account = signedIn(c).account;
    const view = await homeView(deps, account);
    return render(c, 'Home', <HomeBody account={account} view={view} now={deps.clock.now()} />, 200, {
      unread: view.unread.count,
    });
  });
  return app;
}

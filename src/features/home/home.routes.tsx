// GET /: the signed-in home page.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { render } from '../../http/render.tsx';
import { HomeBody } from './home.views.tsx';

/** The home page routes. */
export function homeRoutes() {
  const app = new Hono<AppEnv>();
  app.get('/', (c) => render(c, 'Home', <HomeBody account={c.get('session')!.account} />));
  return app;
}

// GET /: the signed-in home page.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { renderHtml } from '../../http/render.tsx';
import { renderHomeBody } from './home.views.tsx';

export function homeRoutes() {
  const app = new Hono<AppEnv>();
  app.get('/', (c) => renderHtml(c, 'Home', renderHomeBody(c.get('session')!.account)));
  return app;
}

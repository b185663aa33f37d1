// The JSON API under /api/: bearer tokens only (http/middleware.ts resolves them; cookies never count here).
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';

export function apiRoutes() {
  const app = new Hono<AppEnv>();

  /** Who the presented token acts as, with the role as read on this request. */
  app.get('/api/me', (c) => {
    const account = c.get('apiAccount')!;
    return c.json({ username: account.username, role: account.role });
  });

  return app;
}

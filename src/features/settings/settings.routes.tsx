// GET /settings: the admin-only settings frame (the gate in http/gate.ts covers every /settings route).
import { Hono } from 'hono';
import type { Deps } from '../../deps.ts';
import type { AppEnv } from '../../http/env.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { errorPage } from '../../http/render.tsx';
import { renderSettings } from './settings.views.tsx';
import { settingsTabs } from './tabs.ts';

export function settingsRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.get('/settings', refuseControlQuery, async (c) => {
    const key = c.req.query('tab') ?? settingsTabs[0]!.key;
    const tab = settingsTabs.find((t) => t.key === key);
    if (!tab) return errorPage(c, 404, 'No such tab', 'That settings tab does not exist.');
    const body = await tab.render(deps, c);
    return renderSettings(c, tab.key, body);
  });

  return app;
}

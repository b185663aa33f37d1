// The JSON API for retention (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function retentionApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

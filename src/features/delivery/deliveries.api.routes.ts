// The JSON API for deliveries (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function deliveriesApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

// The JSON API for accounts (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function accountsApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

// The JSON API for single sign-on (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function ssoApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

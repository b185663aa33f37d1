// The JSON API for invitations (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function invitationsApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

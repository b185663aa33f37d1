// The JSON API for messages (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function messagesApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

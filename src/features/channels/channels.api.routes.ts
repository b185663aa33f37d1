// The JSON API for channels (issue 19). Being built.
import type { Deps } from '../../deps.ts';
import { apiApp } from '../../http/api.ts';

export function channelsApiRoutes(_deps: Deps) {
  const app = apiApp();
  return app;
}

// GET /readyz (database reachable, migrations current) and GET /metrics (Prometheus, behind SVC_METRICS_TOKEN).
// Both are public in the gate: /readyz tells nothing secret, /metrics checks its own bearer token.
import { Hono } from 'hono';
import { safeEqual, type Deps } from '../../deps.ts';
import type { AppEnv } from '../../http/env.ts';
import type { PrometheusMetrics } from './metrics.service.ts';
import { checkReadiness } from './readiness.service.ts';

/** The operations endpoints; /metrics only when `metrics` is given (SVC_METRICS_TOKEN set), else it stays a 404. */
export function opsRoutes(deps: Deps, metrics: PrometheusMetrics | undefined) {
  const app = new Hono<AppEnv>();

  app.get('/readyz', async (c) => {
    const readiness = await checkReadiness(deps);
    return readiness.ready ? c.text('ready') : c.text(`not ready: ${readiness.reason}\n`, 503);
  });

  const token = deps.config.metricsToken;
  if (metrics && token) {
    app.get('/metrics', async (c) => {
      const bearer = /^Bearer +(\S+) *$/i.exec(c.req.header('authorization') ?? '');
      if (!bearer || !safeEqual(bearer[1]!, token)) {
        return c.text('unauthorized: send Authorization: Bearer <SVC_METRICS_TOKEN>\n', 401, { 'WWW-Authenticate': 'Bearer realm="svc metrics"' });
      }
      return c.body(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
    });
  }

  return app;
}

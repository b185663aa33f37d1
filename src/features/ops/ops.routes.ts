// GET /readyz (database reachable, migrations current) and GET /metrics (Prometheus, behind SVC_METRICS_TOKEN).
// Both are public in the gate: /readyz tells nothing secret, /metrics checks its own bearer token, and a wrong one
// counts against the same per-address limit as the API's unknown tokens.
import { Hono } from 'hono';
import { safeEqual, type Deps } from '../../deps.ts';
import type { AppEnv } from '../../http/env.ts';
import { clientAddress } from '../../http/request.ts';
import { countBadBearer } from '../tokens/tokens.service.ts';
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
      // The right token always works, so others behind the same address cannot lock the scraper out.
      if (!bearer || !safeEqual(bearer[1]!, token)) {
        // A guess (a wrong token) is counted; a request with no token at all is no guess and costs no write.
        const counted = bearer ? await countBadBearer(deps, clientAddress(c)) : undefined;
        if (counted?.reason === 'throttled') {
          const seconds = String(Math.ceil(counted.retryAfterMs / 1000));
          return c.text(`too many bad tokens from this address: try again in ${seconds} seconds\n`, 429, {
            'Retry-After': seconds,
          });
        }
        return c.text('unauthorized: send Authorization: Bearer <SVC_METRICS_TOKEN>\n', 401, {
          'WWW-Authenticate': 'Bearer realm="svc metrics"',
        });
      }
      return c.body(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
    });
  }

  return app;
}

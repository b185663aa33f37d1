// The JSON API for retention: read and set how long messages and their delivery records are kept, over
// the same service calls as the Settings dial, so the range and its refusal are the console's. Admin only.
import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.ts';
import { apiAccount, apiApp, apiRoute, invalid, jsonAnswer, jsonBody, problem } from '../../http/api.ts';
import { wordsOf } from '../refusals.ts';
import { RETENTION_REFUSALS } from './retention.refusals.ts';
import { RETENTION_MAX_DAYS, RETENTION_MIN_DAYS, retentionDays, setRetentionDays } from './retention.service.ts';

const OUT_OF_RANGE = wordsOf(RETENTION_REFUSALS['out-of-range'], undefined);

const Retention = z
  .strictObject({
    days: z.number().int().openapi({
      description:
        'Messages and their delivery records older than this are removed, except any with a pending delivery.',
    }),
    min: z.number().int().openapi({ description: 'The smallest value `days` may take.', example: RETENTION_MIN_DAYS }),
    max: z.number().int().openapi({ description: 'The largest value `days` may take.', example: RETENTION_MAX_DAYS }),
  })
  .openapi('Retention');

// The range is the domain's rule (setRetentionDays); the document states it, the service enforces it.
const RetentionSet = z
  .strictObject({
    days: z.number({ error: OUT_OF_RANGE }).openapi({
      type: 'integer',
      minimum: RETENTION_MIN_DAYS,
      maximum: RETENTION_MAX_DAYS,
      description: 'Whole days.',
      example: 90,
    }),
  })
  .openapi('RetentionSet');

const tags = ['Retention'];

const read = apiRoute({
  method: 'get',
  path: '/api/settings/retention',
  tags,
  summary: 'Read the retention',
  description: 'How many days messages and their delivery records are kept, and the range an administrator may set.',
  responses: { 200: jsonAnswer(Retention, 'The retention in force.') },
});

const set = apiRoute({
  method: 'put',
  path: '/api/settings/retention',
  tags,
  summary: 'Set the retention',
  description: `Sets the retention in whole days, ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}; anything else is a 422 on \`days\`. The next prune applies it.`,
  request: { body: jsonBody(RetentionSet) },
  responses: { 200: jsonAnswer(Retention, 'The retention as set.') },
});

const answer = (days: number) => ({ days, min: RETENTION_MIN_DAYS, max: RETENTION_MAX_DAYS });

/** GET and PUT /api/settings/retention. */
export function retentionApiRoutes(deps: Deps) {
  const app = apiApp();

  app.openapi(read, async (c) => {
    return c.json(answer(await retentionDays(deps)), 200);
  });

  app.openapi(set, async (c) => {
    const { days } = c.req.valid('json');
    const result = await setRetentionDays(deps, { actorId: apiAccount(c).id }, days);
    if (!result.ok && result.reason === 'not-admin')
      return problem(c, 403, RETENTION_REFUSALS['not-admin'].type, RETENTION_REFUSALS['not-admin'].words);
    if (!result.ok) return invalid(c, { days: OUT_OF_RANGE });
    return c.json(answer(days), 200);
  });

  return app;
}

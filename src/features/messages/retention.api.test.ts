// The retention API: read and set the dial over bearer tokens, with the Settings dial's range and words; admin only.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { assertProblem, buildApiUser } from '../../../test/helpers/api.ts';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { pruneMessages, retentionDays } from './retention.service.ts';

const DAY = 24 * 60 * 60 * 1000;
const PATH = '/api/settings/retention';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  test('an admin reads the retention in force and its range, sets it, and the next prune applies it', async () => {
    const { api } = await buildApiUser(t, 'admin');
    assert.deepEqual((await api.get(PATH)).body, { days: 90, min: 1, max: 3650 });
    const set = await api.put(PATH, { days: 7 });
    assert.equal(set.status, 200);
    assert.deepEqual(set.body, { days: 7, min: 1, max: 3650 });
    assert.deepEqual((await api.get(PATH)).body, { days: 7, min: 1, max: 3650 });
    assert.equal(await retentionDays(t.deps), 7);
    const old = await buildMessage(t);
    t.clock.advance(8 * DAY);
    assert.equal(await pruneMessages(t.deps), 1);
    assert.equal((await t.deps.db.selectFrom('messages').select('id').where('id', '=', old).execute()).length, 0);
  });

  test('the bounds are the console’s: 1 and 3650 are taken; anything else is a 422 on days in the console’s words', async () => {
    const { api } = await buildApiUser(t, 'admin');
    for (const days of [1, 3650]) assert.equal((await api.put(PATH, { days })).body.days, days);
    for (const days of [0, -4, 3651, 1.5, 1e9, '30', null, true]) {
      const res = await api.put(PATH, { days });
      assertProblem(res, 422, 'invalid');
      assert.deepEqual(
        res.body.errors,
        [{ in: 'body', field: 'days', detail: 'Enter a whole number of days from 1 to 3650.' }],
        JSON.stringify(days),
      );
    }
    const missing = await api.put(PATH, {});
    assertProblem(missing, 422, 'invalid');
    assert.equal(missing.body.errors[0].field, 'days');
    assertProblem(await api.put(PATH, { days: 30, hours: 2 }), 422, 'invalid');
    assertProblem(
      await api.request('PUT', PATH, undefined, {
        raw: 'days=30',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported-media-type',
    );
    assertProblem(
      await api.request('PUT', PATH, undefined, { raw: '{"days":', headers: { 'content-type': 'application/json' } }),
      400,
      'malformed-json',
    );
    assert.equal(await retentionDays(t.deps), 3650, 'every refusal left the dial alone');
  });

  test('a retention set through the API shows on the console’s Settings, and one set there reads back through the API', async () => {
    const { api } = await buildApiUser(t, 'admin');
    const { client } = await signedInAs(t, 'admin');
    await api.put(PATH, { days: 45 });
    const tab = await client.get('/settings?tab=channels');
    assert.match(tab.text, /kept for <strong>45<\/strong> days/);
    assert.equal((await client.post('/settings/channels/retention', { days: '120' })).status, 303);
    assert.equal((await api.get(PATH)).body.days, 120);
  });

  test('a viewer’s token is refused both with 403 admin-only; a read-only token reads and is refused the write', async () => {
    const viewer = await buildApiUser(t, 'viewer');
    assertProblem(await viewer.api.get(PATH), 403, 'admin-only');
    assertProblem(await viewer.api.put(PATH, { days: 1 }), 403, 'admin-only');
    const reader = await buildApiUser(t, 'admin', { readOnly: true });
    assert.equal((await reader.api.get(PATH)).body.days, 90);
    assertProblem(await reader.api.put(PATH, { days: 1 }), 403, 'read-only-token');
    assert.equal(await retentionDays(t.deps), 90);
  });
});

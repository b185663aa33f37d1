import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { CHANNELS_PAGE_SIZE } from './channels.service.ts';

const SECRET = 'whsec-Sup3r-S3cret-Value';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  const channels = () => t.deps.db.selectFrom('channels').selectAll().orderBy('created_at').orderBy('id').execute();

  test('a viewer gets 403 on every channel route and changes nothing', async () => {
    const admin = await signedInAs(t, 'admin');
    const { client } = await signedInAs(t, 'viewer');
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const before = await channels();
    const attempts = [
      client.get('/settings?tab=channels'),
      client.get(`/settings/channels/${ch.id}`),
      client.post('/settings/channels/check', { id: ch.id }),
      client.post('/settings/channels/delete', { id: ch.id, confirm: 'yes' }),
      client.get(`/settings?tab=channels&edit=${ch.id}`),
      client.post('/settings/channels', { url: 'https://hooks.example.com/new', classes: 'drift' }),
      client.post('/settings/channels/update', {
        id: ch.id,
        url: 'https://evil.example.com/',
        classes: 'drift',
        enabled: 'on',
      }),
      client.post('/settings/channels/delete', { id: ch.id }),
      client.post('/settings/channels/retention', { days: '1' }),
    ];
    for (const res of await Promise.all(attempts)) assert.equal(res.status, 403);
    assert.deepEqual(await channels(), before);
  });

  test('create: enabled, classes sorted, authored, secret stored but never shown or logged', async () => {
    const { account, client } = await signedInAs(t, 'admin');
    const res = await client.post('/settings/channels', {
      url: ' https://Hooks.Example.com/svc/T1 ',
      classes: ['drift', 'clock', 'drift'],
      secret: SECRET,
    });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/settings?tab=channels&notice=created');
    const [row] = await channels();
    assert.deepEqual(
      {
        url: row!.url,
        classes: row!.classes,
        enabled: row!.enabled,
        secret: row!.secret,
        created_by: row!.created_by,
        failures: row!.consecutive_failures,
      },
      {
        url: 'https://hooks.example.com/svc/T1',
        classes: 'clock,drift',
        enabled: 1,
        secret: SECRET,
        created_by: account.id,
        failures: 0,
      },
    );
    const page = await client.get(res.location!);
    assert.match(page.text, /Channel created/);
    assert.match(page.text, /https:\/\/hooks\.example\.com\/svc\/T1/);
    assert.match(page.text, /clock, drift/);
    assert.match(
      page.text,
      /<span class="health healthy">Healthy<\/span> <span class="health-detail">no delivery yet<\/span>/,
    );
    assert.match(page.text, /class="badge secret-set">set</);
    const edit = await client.get(`/settings?tab=channels&edit=${row!.id}`);
    assert.match(edit.text, /Edit channel/);
    for (const text of [page.text, edit.text, t.logs.join('')]) assert.ok(!text.includes(SECRET));
  });

  test('create refusals say why and store nothing', async () => {
    const { client } = await signedInAs(t, 'admin');
    const cases: [Record<string, string | string[]>, RegExp][] = [
      [{ url: 'https://hooks.example.com/', classes: [] }, /Choose at least one class/],
      [{ url: 'https://hooks.example.com/', classes: ['drift', 'weather'] }, /Unknown class/],
      [{ url: 'http://hooks.example.com/', classes: 'drift' }, /Plain http:\/\/ is refused/],
      [{ url: 'http://localhost:9000/', classes: 'drift' }, /host name, not an IP address/],
      [{ url: 'https://169.254.169.254/', classes: 'drift' }, /internal address/],
      [{ url: 'https://[::ffff:10.0.0.1]/', classes: 'drift' }, /internal address/],
      [{ url: 'https://u:p@hooks.example.com/', classes: 'drift' }, /user name or password/],
      [{ url: 'not a url', classes: 'drift' }, /not an absolute URL/],
      [{ classes: 'drift' }, /Enter the channel&#39;s URL|Enter the channel's URL/],
      [{ url: 'https://hooks.example.com/', classes: 'drift', secret: 'x'.repeat(513) }, /at most 512 characters/],
    ];
    for (const [fields, message] of cases) {
      const res = await client.post('/settings/channels', fields);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.match(res.text, message, JSON.stringify(fields));
      assert.ok(!res.text.includes('x'.repeat(513)), 'a refused secret is not echoed');
    }
    assert.equal((await channels()).length, 0);
    const loopback = await client.post('/settings/channels', {
      url: 'http://127.0.0.1:8080/hook',
      classes: 'coverage',
    });
    assert.equal(loopback.status, 303, 'http:// to a loopback IP literal is accepted');
  });

  test('update: blank secret keeps, typed replaces, clear removes and wins; enabled and classes change', async () => {
    const { client } = await signedInAs(t, 'admin');
    await client.post('/settings/channels', { url: 'https://hooks.example.com/a', classes: 'drift', secret: SECRET });
    const id = (await channels())[0]!.id;
    const update = (fields: Record<string, string | string[]>) =>
      client.post('/settings/channels/update', {
        id,
        url: 'https://hooks.example.com/a',
        classes: 'drift',
        enabled: 'on',
        secret: '',
        ...fields,
      });

    assert.equal((await update({ classes: ['coverage', 'clock'] })).status, 303);
    let row = (await channels())[0]!;
    assert.deepEqual([row.secret, row.classes, row.enabled], [SECRET, 'clock,coverage', 1], 'blank keeps the secret');

    assert.equal((await update({ secret: 'second-secret' })).status, 303);
    assert.equal((await channels())[0]!.secret, 'second-secret', 'typed replaces');

    assert.equal((await update({ secret: 'third-secret', clear_secret: 'on' })).status, 303);
    assert.equal((await channels())[0]!.secret, null, 'clear wins over a typed value');
    assert.match((await client.get('/settings?tab=channels')).text, /class="badge secret-none">none</);

    const { enabled: _omit, ...withoutEnabled } = {
      id,
      url: 'https://hooks.example.com/b',
      classes: 'drift',
      enabled: 'on',
      secret: '',
    };
    assert.equal((await client.post('/settings/channels/update', withoutEnabled)).status, 303);
    row = (await channels())[0]!;
    assert.deepEqual([row.url, row.enabled], ['https://hooks.example.com/b', 0], 'unticked enabled disables');
    assert.match((await client.get('/settings?tab=channels')).text, /<span class="health disabled">Disabled<\/span>/);
    const skipped = await buildMessage(t);
    assert.equal(
      (await t.deps.db.selectFrom('deliveries').select('id').where('message_id', '=', skipped).execute()).length,
      0,
      'a disabled channel is skipped',
    );

    const refused = await update({ url: 'https://10.0.0.8/', secret: 'fourth-secret' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /internal address/);
    assert.ok(!refused.text.includes('fourth-secret'));
    row = (await channels())[0]!;
    assert.deepEqual([row.url, row.secret], ['https://hooks.example.com/b', null], 'a refused update changes nothing');

    const none = await update({ classes: [] });
    assert.equal(none.status, 400);
    assert.match(none.text, /Choose at least one class/);
  });

  test('update or delete of a channel that no longer exists is a no-op with a notice', async () => {
    const { client } = await signedInAs(t, 'admin');
    const up = await client.post('/settings/channels/update', {
      id: 'gone',
      url: 'https://hooks.example.com/',
      classes: 'drift',
      enabled: 'on',
    });
    assert.equal(up.location, '/settings?tab=channels&notice=gone');
    const del = await client.post('/settings/channels/delete', { id: 'gone' });
    assert.equal(del.status, 303);
    assert.equal(del.location, '/settings?tab=channels&notice=gone');
    assert.match((await client.get(del.location!)).text, /That channel no longer exists/);
    assert.match((await client.get('/settings?tab=channels&edit=gone')).text, /That channel no longer exists/);
  });

  test('delete is idempotent; pending deliveries are cancelled, finished ones stay on the message', async () => {
    const admin = await signedInAs(t, 'admin');
    const ch = await buildChannel(t, { createdBy: admin.account.id });
    const delivered = await buildMessage(t);
    await t.deps.db.updateTable('deliveries').set({ state: 'delivered' }).where('message_id', '=', delivered).execute();
    const pending = await buildMessage(t);
    const asked = await admin.client.post('/settings/channels/delete', { id: ch.id });
    assert.equal(asked.status, 200, 'the first step only asks');
    assert.match(
      asked.text,
      /Delete the channel <span class="channel-url">https:\/\/hooks\.example\.com\/[\w-]+<\/span>\?/,
    );
    assert.match(asked.text, /name="confirm" value="yes"/);
    assert.equal((await channels()).length, 1, 'nothing deleted before the confirmation');
    const first = await admin.client.post('/settings/channels/delete', { id: ch.id, confirm: 'yes' });
    assert.equal(first.location, '/settings?tab=channels&notice=deleted');
    assert.equal((await channels()).length, 0);
    const rows = await t.deps.db
      .selectFrom('deliveries')
      .select(['message_id', 'state', 'channel_id', 'last_error'])
      .execute();
    assert.deepEqual(
      rows
        .map((r) => [r.message_id === delivered ? 'delivered-msg' : 'pending-msg', r.state, r.channel_id, r.last_error])
        .sort(),
      [
        ['delivered-msg', 'delivered', null, null],
        ['pending-msg', 'cancelled', null, 'channel deleted'],
      ],
      'a cancelled delivery says why, never a stale error from an earlier attempt',
    );
    assert.equal(pending.length > 0, true);
    const again = await admin.client.post('/settings/channels/delete', { id: ch.id, confirm: 'yes' });
    assert.equal(again.status, 303);
    assert.equal(
      (await admin.client.post('/settings/channels/delete', { id: ch.id })).location,
      '/settings?tab=channels&notice=gone',
      'nothing to confirm once gone',
    );
  });

  test('each row shows URL, classes, health with consecutive failures and the last error; the list pages', async () => {
    const admin = await signedInAs(t, 'admin');
    const ch = await buildChannel(t, {
      createdBy: admin.account.id,
      url: 'https://broken.example.com/x',
      classes: 'clock',
    });
    const since = t.clock.now() - 3 * 3600_000;
    await t.deps.db
      .updateTable('channels')
      .set({
        consecutive_failures: 3,
        last_error: 'HTTP 503 from <receiver>',
        last_error_at: t.clock.now(),
        failing_since: since,
      })
      .where('id', '=', ch.id)
      .execute();
    const page = await admin.client.get('/settings?tab=channels');
    assert.match(
      page.text,
      new RegExp(`<a class="channel-url" href="/settings/channels/${ch.id}">https://broken\\.example\\.com/x</a>`),
    );
    assert.match(page.text, /clock · secret <span class="badge secret-none">none<\/span>/);
    assert.match(
      page.text,
      new RegExp(
        `<span class="health failing">Failing</span> <span class="health-detail">since <time datetime="${new Date(since).toISOString()}"[^>]*>[^<]+</time>; 3 consecutive failures</span>`,
      ),
    );
    assert.match(page.text, /Last error: HTTP 503 from &lt;receiver&gt;/, 'the error, escaped');
    assert.match(
      (await admin.client.get(`/settings/channels/${ch.id}`)).text,
      new RegExp(`by ${admin.account.username}`),
    );

    for (let i = 0; i < 120; i++) await buildChannel(t, { createdBy: admin.account.id });
    const first = await admin.client.get('/settings?tab=channels');
    assert.match(first.text, /Page 1 of 2 \(121 channels\)/);
    const second = await admin.client.get('/settings?tab=channels&page=2');
    assert.equal((second.text.match(/<tr class="channel /g) ?? []).length, 21);
  });

  test('a page that is not 1 to 6 digits shows page 1; a page past the end shows the last (never a fractional OFFSET)', async () => {
    const admin = await signedInAs(t, 'admin');
    for (let i = 0; i < CHANNELS_PAGE_SIZE + 1; i++) await buildChannel(t, { createdBy: admin.account.id });
    for (const page of ['1.001', '1.5', '1e400', '-1', '0x2', '', 'two', '1234567', '2.0']) {
      const res = await admin.client.get(`/settings?tab=channels&page=${encodeURIComponent(page)}`);
      assert.equal(res.status, 200, page);
      assert.match(res.text, /Page 1 of 2 \(101 channels\)/, page);
    }
    for (const page of ['2', '02', '999999']) {
      const res = await admin.client.get(`/settings?tab=channels&page=${page}`);
      assert.equal(res.status, 200, page);
      assert.match(res.text, /Page 2 of 2 \(101 channels\)/, page);
    }
  });
  test('create: a refused form that carried a secret asks for it again and refuses it blank, unless "No secret" is ticked', async () => {
    const { client } = await signedInAs(t, 'admin');
    const url = 'https://hooks.example.com/signed';
    const refused = await client.post('/settings/channels', { url, classes: [], secret: SECRET });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /Choose at least one class/);
    const again =
      /The secret was not kept because the form was refused\. Enter it again, or tick &quot;No secret: send unsigned bodies&quot;\./;
    assert.match(refused.text, again);
    assert.match(
      refused.text,
      /<p class="error" id="channel-create-secret-error">The secret was not kept/,
      'said at the secret field',
    );
    assert.match(refused.text, /<input type="hidden" name="secret_retry" value="1"\/>/);
    assert.match(refused.text, /<label for="channel-create-secret_skip">No secret: send unsigned bodies<\/label>/);
    assert.match(
      refused.text,
      /Only when the field above is left blank: a secret typed there is used\./,
      'the box says a typed secret wins',
    );
    assert.ok(!refused.text.includes(SECRET), 'the secret is not echoed');

    // The reported path: tick a class and resubmit with the secret field blank, as the browser re-shows it.
    const blank = await client.post('/settings/channels', { url, classes: 'drift', secret: '', secret_retry: '1' });
    assert.equal(blank.status, 400);
    assert.match(blank.text, again);
    assert.match(blank.text, /<input type="hidden" name="secret_retry" value="1"\/>/, 'still owed');
    assert.equal((await channels()).length, 0, 'no unsigned channel');

    assert.equal(
      (await client.post('/settings/channels', { url, classes: 'drift', secret: SECRET, secret_retry: '1' })).location,
      '/settings?tab=channels&notice=created',
    );
    assert.equal((await channels())[0]!.secret, SECRET);
    assert.equal(
      (
        await client.post('/settings/channels', {
          url,
          classes: 'drift',
          secret: '',
          secret_retry: '1',
          secret_skip: 'on',
        })
      ).status,
      303,
      'an explicit choice',
    );
    assert.deepEqual(
      (await channels()).map((r) => r.secret === SECRET).sort(),
      [false, true],
      'the second has no secret',
    );

    const control = await client.post('/settings/channels', { url, classes: 'drift', secret: 'bad\u0007secret' });
    assert.equal(control.status, 400);
    assert.match(control.text, /name="secret_retry"/, 'a secret refused for its characters is owed too');
    const plain = await client.post('/settings/channels', { url, classes: [] });
    assert.doesNotMatch(plain.text, /secret_retry|was not kept/, 'no secret given, nothing to ask again');
    for (const text of [refused.text, blank.text, t.logs.join('')]) assert.ok(!text.includes(SECRET));
  });

  test('update: a refused form that carried a new secret asks for it again; blank is refused, not read as "keep"', async () => {
    const { client } = await signedInAs(t, 'admin');
    await client.post('/settings/channels', {
      url: 'https://hooks.example.com/a',
      classes: 'drift',
      secret: 'old-secret',
    });
    const id = (await channels())[0]!.id;
    const update = (fields: Record<string, string | string[]>) =>
      client.post('/settings/channels/update', {
        id,
        url: 'https://hooks.example.com/a',
        classes: 'drift',
        enabled: 'on',
        secret: '',
        ...fields,
      });
    const refused = await update({ classes: [], secret: SECRET });
    assert.equal(refused.status, 400);
    const again =
      /The new secret was not kept because the form was refused\. Enter it again, or tick &quot;Keep the current secret&quot;\./;
    assert.match(refused.text, again);
    assert.match(refused.text, /<label for="channel-edit-secret_skip">Keep the current secret<\/label>/);
    assert.ok(!refused.text.includes(SECRET));
    const blank = await update({ secret_retry: '1' });
    assert.equal(blank.status, 400);
    assert.match(blank.text, again);
    assert.equal((await channels())[0]!.secret, 'old-secret', 'nothing saved');
    assert.equal((await update({ secret_retry: '1', secret: SECRET })).status, 303);
    assert.equal((await channels())[0]!.secret, SECRET);
    assert.equal(
      (await update({ secret_retry: '1', secret_skip: 'on', url: 'https://hooks.example.com/b' })).status,
      303,
      'keep, chosen',
    );
    assert.deepEqual(
      [(await channels())[0]!.secret, (await channels())[0]!.url],
      [SECRET, 'https://hooks.example.com/b'],
    );
    assert.equal(
      (await update({ secret_retry: '1', clear_secret: 'on' })).status,
      303,
      '"Remove the secret" is a choice too',
    );
    assert.equal((await channels())[0]!.secret, null);
    const cleared = await update({ classes: [], secret: 'typed', clear_secret: 'on' });
    assert.doesNotMatch(cleared.text, /secret_retry/, 'a removal wins over a typed value: nothing owed');
    assert.match(
      (await update({ classes: [], secret: SECRET })).text,
      /Enter it again, or tick &quot;No secret: send unsigned bodies&quot;/,
      'a channel without a secret',
    );
  });

  test('a disabled channel still shows the failure streak and last error it was disabled with, as history', async () => {
    const admin = await signedInAs(t, 'admin');
    const ch = await buildChannel(t, {
      createdBy: admin.account.id,
      url: 'https://broken.example.com/y',
      classes: 'drift',
    });
    const since = t.clock.now() - 2 * 3600_000;
    await t.deps.db
      .updateTable('channels')
      .set({
        enabled: 0,
        consecutive_failures: 4,
        last_error: 'HTTP 502 from <receiver>',
        last_error_at: t.clock.now(),
        failing_since: since,
      })
      .where('id', '=', ch.id)
      .execute();
    const list = await admin.client.get('/settings?tab=channels');
    assert.match(
      list.text,
      new RegExp(
        `<span class="health disabled">Disabled</span> <span class="health-detail">nothing is sent to it; before it was disabled: 4 consecutive failures since <time datetime="${new Date(since).toISOString()}"`,
      ),
    );
    assert.match(
      list.text,
      /<span class="last-error">Last error before it was disabled: HTTP 502 from &lt;receiver&gt;<\/span>/,
    );
    const page = await admin.client.get(`/settings/channels/${ch.id}`);
    assert.match(page.text, /nothing is sent to it; before it was disabled: 4 consecutive failures/);
    assert.match(
      page.text,
      /<dt>Last error before it was disabled<\/dt><dd><span class="last-error">HTTP 502 from &lt;receiver&gt;<\/span>/,
    );

    await t.deps.db
      .updateTable('channels')
      .set({ consecutive_failures: 0, failing_since: null })
      .where('id', '=', ch.id)
      .execute();
    const quiet = await admin.client.get(`/settings/channels/${ch.id}`);
    assert.match(quiet.text, /<span class="health-detail">nothing is sent to it<\/span>/, 'no streak, no history line');
    assert.doesNotMatch(quiet.text, /Last error/);
  });
});

// The home page says what needs attention now: unread messages for everyone; for admins failing channels, dead
// letters of the last day, open invitations, and a first-steps checklist whose items go as each is done.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { mintInvitation } from '../team/invitations.service.ts';

/** The links of the "Get started" checklist, or [] when it is gone. */
function checklist(html: string): string[] {
  const block = /<h2 id="home-start">Get started<\/h2>(.*?)<\/ol>/s.exec(html)?.[1] ?? '';
  return [...block.matchAll(/<a href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]!);
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
    await t.deps.db.deleteFrom('invitations').execute();
    await t.deps.db.deleteFrom('sso_providers').execute();
  });

  // First: the checklist's "invite someone" counts a second account as done, and the tests share a database.
  test('a new admin gets a checklist whose items disappear as each is done', async () => {
    const { account, client } = await signedInAs(t, 'admin');
    assert.deepEqual(checklist((await client.get('/')).text), [
      'Declare a notification channel',
      'Declare a single sign-on provider',
      'Invite someone',
    ]);
    await buildChannel(t, { createdBy: account.id });
    assert.deepEqual(checklist((await client.get('/')).text), ['Declare a single sign-on provider', 'Invite someone']);
    await mintInvitation(t.deps, { actorId: account.id, role: 'viewer', base: 'http://localhost' });
    assert.deepEqual(checklist((await client.get('/')).text), ['Declare a single sign-on provider']);
    await t.deps.db
      .insertInto('sso_providers')
      .values({
        id: 'prov-1',
        slug: 'acme',
        display_name: 'Acme',
        issuer: 'https://idp.example.test',
        client_id: 'svc',
        client_secret: null,
        enabled: 1,
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
        created_by: account.id,
      })
      .execute();
    const html = (await client.get('/')).text;
    assert.deepEqual(checklist(html), []);
    assert.doesNotMatch(html, /Get started/);
  });

  test('everyone sees the latest unread messages, a few of them, with a link to all', async () => {
    const { client } = await signedInAs(t, 'viewer');
    assert.match((await client.get('/')).text, /You are all caught up\./);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push(await buildMessage(t, { headline: `Message number ${i}.` }));
      t.clock.advance(1000);
    }
    await client.post('/messages/read', { id: ids[6]! });
    const html = (await client.get('/')).text;
    const shown = [...html.matchAll(/<a href="\/messages\/([^"]+)">/g)].map((m) => m[1]);
    assert.deepEqual(shown, [ids[5], ids[4], ids[3], ids[2], ids[1]], 'the five newest unread, newest first');
    assert.match(html, /<a href="\/inbox\?show=unread">All 6 unread messages<\/a>/);
    assert.doesNotMatch(html, /Needs attention|Get started/, 'no admin parts for a viewer');
  });

  test('admins see failing channels, dead letters of the last day and open invitations as counts with links', async () => {
    const { account, client } = await signedInAs(t, 'admin');
    await buildAccount(t, { role: 'viewer' });
    const calm = (await client.get('/')).text;
    assert.match(calm, /Every channel is healthy and nothing was dead-lettered in the last day\./);
    assert.match(calm, /No invitation is open\./);

    const bad = await buildChannel(t, { createdBy: account.id, url: 'https://broken.example.com/hook' });
    await buildChannel(t, { createdBy: account.id, url: 'https://fine.example.com/hook' });
    await t.deps.db
      .updateTable('channels')
      .set({ consecutive_failures: 169, last_error_at: t.clock.now() - 120_000 })
      .where('id', '=', bad.id)
      .execute();
    const old = await buildMessage(t);
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', updated_at: t.clock.now() - 25 * 3_600_000 })
      .where('message_id', '=', old)
      .execute();
    const recent = await buildMessage(t);
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', updated_at: t.clock.now() })
      .where('message_id', '=', recent)
      .where('channel_id', '=', bad.id)
      .execute();
    await mintInvitation(t.deps, { actorId: account.id, role: 'viewer', base: 'http://localhost' });
    await mintInvitation(t.deps, { actorId: account.id, role: 'viewer', base: 'http://localhost' });

    const html = (await client.get('/')).text;
    assert.match(html, /<a href="\/settings\?tab=channels">1 channel is failing<\/a>/);
    assert.match(
      html,
      /169 failed attempts in a row, last <time[^>]*>2 min ago<\/time>: <span class="url">https:\/\/broken\.example\.com\/hook<\/span>/,
    );
    assert.doesNotMatch(html, /fine\.example\.com/);
    assert.match(
      html,
      /<a href="\/settings\?tab=deliveries">1 delivery dead-lettered in the last day<\/a>/,
      'only the last day counts',
    );
    assert.match(html, /<a href="\/settings\?tab=team">2 invitations are still open<\/a>/);
  });
});

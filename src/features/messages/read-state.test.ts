import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { markAllRead, markRead, unreadCount } from './read-state.service.ts';

/** The bell's text on a page: undefined without a session, '0' for a signed-in page without a badge. */
function bell(html: string): string | undefined {
  if (!html.includes('<nav aria-label="Main">')) return undefined;
  return /<span class="bell">([^<]+)<span class="visually-hidden"> unread<\/span><\/span>/.exec(html)?.[1] ?? '0';
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  async function readRows(accountId: string) {
    return t.deps.db.selectFrom('message_reads').select('message_id').where('account_id', '=', accountId).execute();
  }

  test('the bell shows each account its own unread count on every screen', async () => {
    const admin = await signedInAs(t, 'admin');
    const viewer = await signedInAs(t, 'viewer');
    assert.equal(bell((await admin.client.get('/')).text), '0');
    const first = await buildMessage(t);
    t.clock.advance(1000);
    await buildMessage(t);
    for (const path of ['/', '/inbox', '/messages', '/settings?tab=channels', '/no-such-page']) {
      assert.equal(bell((await admin.client.get(path)).text), '2', path);
    }
    assert.equal(bell((await viewer.client.get('/settings')).text), '2', 'the 403 page carries the bell too');
    const res = await viewer.client.post('/messages/read', { id: first, back: '/inbox' });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/inbox');
    assert.equal(bell((await viewer.client.get('/')).text), '1');
    assert.equal(bell((await admin.client.get('/')).text), '2', 'marking read is per account');
    assert.equal(bell((await admin.client.get(`/messages/${first}`)).text), '1', 'opening a message marks it read');
    assert.equal(bell((await t.client().get('/login')).text), undefined, 'no bell without a session');
  });

  test('mark read takes one or more ids; unknown ids are ignored; nothing chosen is a 400', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const ids = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await buildMessage(t));
      t.clock.advance(1000);
    }
    const res = await client.post('/messages/read', { id: [ids[1]!, ids[3]!, 'no-such-message'] });
    assert.equal(res.status, 303);
    assert.equal(await unreadCount(t.deps, account.id), 2);
    const page = await client.get('/inbox');
    assert.equal((page.text.match(/class="message unread"/g) ?? []).length, 2);
    assert.equal((page.text.match(/class="message read"/g) ?? []).length, 2);
    assert.equal((await client.post('/messages/read', {})).status, 400);
    assert.equal((await client.post('/messages/read', { id: 'bad id!' })).status, 400);
  });

  test('read-all marks everything read for that account; later messages are unread again', async () => {
    const a = await signedInAs(t, 'viewer');
    const b = await signedInAs(t, 'viewer');
    for (let i = 0; i < 3; i++) await buildMessage(t);
    const res = await a.client.post('/messages/read-all', { back: '/messages?before=x' });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/messages?notice=all-read');
    assert.equal(await unreadCount(t.deps, a.account.id), 0);
    assert.equal(await unreadCount(t.deps, b.account.id), 3);
    assert.match((await a.client.get(res.location!)).text, /All messages are marked read/);
    t.clock.advance(1);
    await buildMessage(t);
    assert.equal(bell((await a.client.get('/')).text), '1');
  });

  test('the count stops at its cap and shows as 99+', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const rows = Array.from({ length: 150 }, (_, i) => ({
      id: `cap-${String(i).padStart(4, '0')}`,
      class: 'drift' as const,
      cause: 'drift' as const,
      subject_kind: 'service',
      subject_key: `s${i}`,
      instant: t.clock.now(),
      headline: `Message ${i}`,
      census: null,
      link: null,
      body: '{}',
      created_at: t.clock.now() + i,
    }));
    await t.deps.db.insertInto('messages').values(rows).execute();
    assert.equal(await unreadCount(t.deps, account.id), 100, 'counted up to the cap');
    assert.equal(bell((await client.get('/')).text), '99+');
  });

  test('a return address outside the inbox is ignored', async () => {
    const { client } = await signedInAs(t, 'viewer');
    const id = await buildMessage(t);
    for (const back of [
      'https://evil.example/',
      '//evil.example/inbox',
      '/settings',
      '/inbox\\@evil',
      '/messages/../settings',
    ]) {
      assert.equal((await client.post('/messages/read', { id, back })).location, '/inbox', back);
    }
    assert.equal((await client.post('/messages/read', { id, back: `/messages/${id}` })).location, `/messages/${id}`);
  });

  test('reads fold into the watermark, so read rows do not pile up', async () => {
    const { account } = await signedInAs(t, 'viewer');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await buildMessage(t));
      t.clock.advance(1000);
    }
    // Folding happens only below now minus the margin (see the next test for why).
    t.clock.advance(5 * 60_000); // the watermark's margin
    // Reading oldest first: each read extends the unbroken run, so no individual rows remain.
    await markRead(t.deps, account.id, [ids[0]!]);
    await markRead(t.deps, account.id, [ids[1]!]);
    assert.equal((await readRows(account.id)).length, 0);
    assert.equal(await unreadCount(t.deps, account.id), 4);
    // Reading newer ones while an older one is unread keeps rows, until the gap is read.
    await markRead(t.deps, account.id, [ids[5]!, ids[3]!]);
    assert.equal((await readRows(account.id)).length, 2);
    assert.equal(await unreadCount(t.deps, account.id), 2);
    await markRead(t.deps, account.id, [ids[2]!]);
    assert.deepEqual(
      (await readRows(account.id)).map((r) => r.message_id),
      [ids[5]!],
    );
    await markRead(t.deps, account.id, [ids[4]!]);
    // Only the newest millisecond's read stays a row (the watermark stays below it).
    assert.deepEqual(
      (await readRows(account.id)).map((r) => r.message_id),
      [ids[5]!],
    );
    assert.equal(await unreadCount(t.deps, account.id), 0);
    t.clock.advance(1000);
    await buildMessage(t);
    assert.equal(await unreadCount(t.deps, account.id), 1);
  });

  test('messages stored in the same millisecond are told apart', async () => {
    const { account } = await signedInAs(t, 'viewer');
    const ids = [await buildMessage(t), await buildMessage(t), await buildMessage(t)];
    await markRead(t.deps, account.id, [ids[1]!]);
    assert.equal(await unreadCount(t.deps, account.id), 2);
    await markRead(t.deps, account.id, [ids[0]!, ids[2]!]);
    assert.equal(await unreadCount(t.deps, account.id), 0);
    await buildMessage(t);
    assert.equal(await unreadCount(t.deps, account.id), 1, 'a later message in that same millisecond is still unread');
    await markAllRead(t.deps, account.id);
    assert.equal(await unreadCount(t.deps, account.id), 0);
    await buildMessage(t);
    assert.equal(
      await unreadCount(t.deps, account.id),
      1,
      'read-all does not swallow a later message of the same millisecond',
    );
  });

  test('a message stored late, with a created time before an earlier read-all, still counts as unread', async () => {
    const viewer = await signedInAs(t, 'viewer');
    await buildMessage(t);
    t.clock.advance(2000);
    await markAllRead(t.deps, viewer.account.id);
    assert.equal(await unreadCount(t.deps, viewer.account.id), 0);
    // An emit whose clock read was taken a few seconds ago (slow transaction, or svc emit on a skewed host).
    t.clock.advance(-3000);
    await buildMessage(t);
    t.clock.advance(3000);
    assert.equal(await unreadCount(t.deps, viewer.account.id), 1);
  });
});

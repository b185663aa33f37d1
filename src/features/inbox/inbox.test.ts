import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
import { markAllRead } from '../messages/read-state.service.ts';
import { INBOX_PAGE_SIZE } from './inbox.service.ts';

/** Message ids in page order, from the detail links. */
function idsOn(html: string): string[] {
  return [...html.matchAll(/<a href="\/messages\/([A-Za-z0-9_-]+)">/g)].map((m) => m[1]!);
}

/** Follows "Older messages" links from `start`, collecting every id. */
async function walk(client: TestClient, start: string): Promise<string[]> {
  const seen: string[] = [];
  let path: string | undefined = start;
  while (path) {
    const page = await client.get(path);
    assert.equal(page.status, 200, path);
    seen.push(...idsOn(page.text));
    path = /<a href="([^"]+)">Older messages<\/a>/.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
  }
  return seen;
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    await clearOutbox(t);
  });

  test('every signed-in account reads the store on /inbox and /messages, newest first, with every field', async () => {
    const viewer = await signedInAs(t, 'viewer');
    const older = await buildMessage(t, {
      cause: 'declared-input',
      sourceId: 'zone-1',
      headline: 'Older <b>one</b>',
      subject: { kind: 'zone', key: 'example.com' },
    });
    t.clock.advance(60_000);
    const newer = await buildMessage(t, {
      cause: 'threshold',
      headline: 'Certificate expires soon.',
      census: 4,
      subject: { kind: 'certificate', key: 'api.example.com' },
      instant: Date.UTC(2026, 0, 14, 9, 30),
    });
    for (const path of ['/inbox', '/messages']) {
      const page = await viewer.client.get(path);
      assert.equal(page.status, 200);
      assert.deepEqual(idsOn(page.text), [newer, older], path);
      assert.match(page.text, /Clock · A clock or threshold was crossed/);
      assert.match(page.text, /Coverage · An input you declared moved/);
      assert.match(
        page.text,
        /certificate <span class="key">api.<wbr\/>example.<wbr\/>com<\/span>/,
        'the key wraps only after its separators',
      );
      assert.match(page.text, /<time datetime="2026-01-14T09:30:00.000Z" title="2026-01-14 09:30:00 UTC">/);
      assert.match(page.text, /Count: 4/);
      assert.ok(
        page.text.indexOf('Certificate expires soon.') < page.text.indexOf('Clock · '),
        'the headline comes first',
      );
      assert.match(page.text, /href="https:\/\/svc\.example\.test\/sources\/zone-1"/);
      assert.match(page.text, /Older &lt;b&gt;one&lt;\/b&gt;/, 'headlines are escaped');
    }
    assert.equal((await t.client().get('/inbox')).location, '/login', 'signed-out visitors go to sign in');
  });

  test('pages walk the whole store once, in order, even when messages share a millisecond', async () => {
    const { client } = await signedInAs(t, 'viewer');
    const made: string[] = [];
    for (let i = 0; i < INBOX_PAGE_SIZE + 15; i++) {
      made.push(await buildMessage(t));
      if (i % 7 === 0) t.clock.advance(1000);
    }
    const seen = await walk(client, '/inbox');
    assert.equal(seen.length, made.length);
    assert.equal(new Set(seen).size, made.length);
    assert.deepEqual(new Set(seen), new Set(made));
    const rows = await t.deps.db.selectFrom('messages').select(['id', 'created_at']).execute();
    const at = new Map(rows.map((r) => [r.id, r.created_at]));
    for (let i = 1; i < seen.length; i++) assert.ok(at.get(seen[i - 1]!)! >= at.get(seen[i]!)!, 'newest first');
    const second = await client.get(
      `/messages?before=${encodeURIComponent(/before=([^"&]+)/.exec((await client.get('/messages')).text)![1]!)}`,
    );
    assert.match(second.text, /Newest messages/);
  });

  test('a malformed page link is a 400, an unknown message a 404', async () => {
    const { client } = await signedInAs(t, 'viewer');
    const bad = await client.get('/inbox?before=nonsense');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /<h1>Page link not valid<\/h1>/, 'not "Page not found" under a 400');
    assert.equal((await client.get('/messages/no-such-message')).status, 404);
  });

  test('a message shows where it was delivered; channel URLs and errors only to admins', async () => {
    const admin = await signedInAs(t, 'admin');
    const viewer = await signedInAs(t, 'viewer');
    const a = await buildChannel(t, {
      createdBy: admin.account.id,
      url: 'https://hooks.example.com/T0KEN-A/x?key=s3cr3t',
    });
    const b = await buildChannel(t, { createdBy: admin.account.id, url: 'https://dead.example.net/T0KEN-B' });
    const c = await buildChannel(t, { createdBy: admin.account.id, url: 'https://slow.example.org/T0KEN-C' });
    const id = await buildMessage(t, { headline: 'Moved.' });
    const now = t.clock.now();
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'delivered', attempts: 1, delivered_at: now })
      .where('channel_id', '=', a.id)
      .execute();
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', attempts: 5, last_error: 'HTTP 500 from receiver' })
      .where('channel_id', '=', b.id)
      .execute();
    await t.deps.db
      .updateTable('deliveries')
      .set({ attempts: 2, last_error: 'connection refused' })
      .where('channel_id', '=', c.id)
      .execute();

    const asAdmin = await admin.client.get(`/messages/${id}`);
    assert.equal(asAdmin.status, 200);
    assert.match(asAdmin.text, /1 delivered, 1 pending, 1 dead-lettered\./);
    assert.match(asAdmin.text, /https:\/\/hooks\.example\.com\/T0KEN-A\/x\?key=s3cr3t/);
    assert.match(asAdmin.text, /Dead-lettered after 5 attempts/);
    assert.match(asAdmin.text, /HTTP 500 from receiver/);
    assert.ok(
      asAdmin.text.indexOf('dead.example.net') < asAdmin.text.indexOf('slow.example.org'),
      'dead-lettered first',
    );

    const asViewer = await viewer.client.get(`/messages/${id}`);
    assert.equal(asViewer.status, 200);
    assert.match(asViewer.text, new RegExp(`channel ${a.id.slice(0, 6)}`));
    assert.match(asViewer.text, new RegExp(`channel ${b.id.slice(0, 6)}`));
    assert.match(asViewer.text, /1 delivered, 1 pending, 1 dead-lettered\./);
    for (const secret of [
      'T0KEN',
      's3cr3t',
      'hooks.example.com',
      'dead.example.net',
      'HTTP 500 from receiver',
      'connection refused',
    ])
      assert.ok(!asViewer.text.includes(secret), secret);

    // The body shown is the stored body; a deleted channel's record stays on the message.
    const body = (await t.deps.db.selectFrom('messages').select('body').where('id', '=', id).executeTakeFirstOrThrow())
      .body;
    assert.ok(
      asViewer.text.includes(
        body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
      ),
    );
    await t.deps.db.deleteFrom('channels').where('id', '=', a.id).execute();
    assert.match((await viewer.client.get(`/messages/${id}`)).text, /a deleted channel/);
  });

  test('a message routed nowhere says it is kept in the store only', async () => {
    const { client } = await signedInAs(t, 'viewer');
    const id = await buildMessage(t);
    assert.match((await client.get(`/messages/${id}`)).text, /was not sent anywhere/);
  });

  test('times read as "n min ago" from the request clock, the absolute UTC time in the title', async () => {
    const { client } = await signedInAs(t, 'viewer');
    await buildMessage(t, { headline: 'Recent.', instant: t.clock.now() - 3 * 60_000 });
    const page = await client.get('/inbox');
    const iso = new Date(t.clock.now() - 3 * 60_000).toISOString();
    assert.match(
      page.text,
      new RegExp(`<time datetime="${iso}" title="${iso.slice(0, 19).replace('T', ' ')} UTC">3 min ago</time>`),
    );
  });

  test('filters by unread, category and reason are links, and paging keeps them', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const drift = await buildMessage(t, { cause: 'drift', headline: 'Drifted.' });
    t.clock.advance(1000);
    const clock = await buildMessage(t, { cause: 'threshold', headline: 'Crossed.' });
    t.clock.advance(1000);
    const input = await buildMessage(t, { cause: 'declared-input', sourceId: 's-1', headline: 'Input moved.' });
    await client.post('/messages/read', { id: clock });
    assert.deepEqual(idsOn((await client.get('/inbox?show=unread')).text), [input, drift]);
    assert.deepEqual(idsOn((await client.get('/inbox?class=clock')).text), [clock]);
    assert.deepEqual(idsOn((await client.get('/inbox?cause=declared-input')).text), [input]);
    assert.deepEqual(idsOn((await client.get('/inbox?class=coverage&show=unread')).text), [input]);
    assert.deepEqual(
      idsOn((await client.get('/inbox?class=nonsense')).text),
      [input, clock, drift],
      'an unknown value filters nothing',
    );
    const filtered = await client.get('/inbox?show=unread&class=drift');
    assert.match(filtered.text, /<a href="\/inbox\?show=unread&amp;class=drift" aria-current="true">Drift<\/a>/);
    assert.match(
      filtered.text,
      /<a href="\/inbox\?class=drift">All<\/a>/,
      '"All" in the show group drops only that part',
    );
    assert.match((await client.get('/inbox?class=clock&show=unread')).text, /No messages match these filters\./);

    for (let i = 0; i < INBOX_PAGE_SIZE + 3; i++) await buildMessage(t, { cause: 'threshold' });
    const seen = await walk(client, '/inbox?class=clock&show=unread');
    assert.equal(seen.length, INBOX_PAGE_SIZE + 3, 'every unread clock message once, over two pages');
    assert.match(
      (await client.get('/inbox?class=clock')).text,
      /href="\/inbox\?class=clock&amp;before=[^"]+">Older messages/,
    );
    await markAllRead(t.deps, account.id);
    assert.deepEqual(idsOn((await client.get('/inbox?show=unread')).text), []);
  });

  test('"Mark all as read" shows only while something is unread', async () => {
    const { client } = await signedInAs(t, 'viewer');
    assert.doesNotMatch((await client.get('/inbox')).text, /Mark all as read/);
    const id = await buildMessage(t);
    assert.match((await client.get('/inbox')).text, /Mark all as read/);
    await client.post('/messages/read', { id });
    assert.doesNotMatch((await client.get('/inbox')).text, /Mark all as read/);
  });

  test('opening a message marks it read for that account only; its headline is the title; "Mark unread" undoes it', async () => {
    const a = await signedInAs(t, 'viewer');
    const b = await signedInAs(t, 'viewer');
    const id = await buildMessage(t, { headline: 'Zone example.com moved.' });
    const first = await a.client.get(`/messages/${id}`);
    assert.match(first.text, /<title>Zone example\.com moved\. · svc<\/title>/);
    assert.match(first.text, /<h1>Zone example\.com moved\.<\/h1>/);
    assert.match(first.text, /Marked read now that you opened it\./);
    assert.match(
      (await a.client.get(`/messages/${id}`)).text,
      /You have read this message\./,
      'a second visit writes nothing new',
    );
    assert.equal((await t.deps.db.selectFrom('message_reads').select('message_id').execute()).length, 1);
    assert.match((await a.client.get('/inbox')).text, /class="message read"/);
    assert.match((await b.client.get('/inbox')).text, /class="message unread"/, 'the other account has not read it');

    const res = await a.client.post('/messages/unread', { id });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/inbox?notice=unread');
    const inbox = await a.client.get(res.location!);
    assert.match(inbox.text, /The message is marked unread\./);
    assert.match(inbox.text, /class="message unread"/);
    assert.equal((await a.client.post('/messages/unread', { id: 'bad id!' })).status, 400);
  });

  test('"Mark unread" under the read-all watermark keeps every other message read', async () => {
    const { account, client } = await signedInAs(t, 'viewer');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await buildMessage(t));
      t.clock.advance(60_000);
    }
    t.clock.advance(10 * 60_000);
    await markAllRead(t.deps, account.id);
    assert.equal((await client.post('/messages/unread', { id: ids[1]! })).status, 303);
    assert.deepEqual(idsOn((await client.get('/inbox?show=unread')).text), [ids[1]]);
    await client.post('/messages/read', { id: ids[1]! });
    assert.deepEqual(idsOn((await client.get('/inbox?show=unread')).text), []);
    await client.post('/messages/unread', { id: ids[0]! });
    assert.deepEqual(idsOn((await client.get('/inbox?show=unread')).text), [ids[0]]);
  });

  test('admins see a per-row hint for dead-lettered or still-failing deliveries; viewers do not', async () => {
    const admin = await signedInAs(t, 'admin');
    const viewer = await signedInAs(t, 'viewer');
    const a = await buildChannel(t, { createdBy: admin.account.id, url: 'https://a.example.com/h' });
    const b = await buildChannel(t, { createdBy: admin.account.id, url: 'https://b.example.com/h' });
    const dead = await buildMessage(t, { headline: 'Dead one.' });
    t.clock.advance(1000);
    const failing = await buildMessage(t, { headline: 'Failing one.' });
    t.clock.advance(1000);
    await buildMessage(t, { headline: 'Fine one.' });
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', attempts: 5 })
      .where('message_id', '=', dead)
      .where('channel_id', '=', a.id)
      .execute();
    await t.deps.db
      .updateTable('deliveries')
      .set({ attempts: 2 })
      .where('message_id', '=', failing)
      .where('channel_id', '=', b.id)
      .execute();
    const page = (await admin.client.get('/inbox')).text;
    assert.match(page, /Dead one\.<\/a>(?:(?!<\/li>).)*Delivery: 1 dead-lettered/);
    assert.match(page, /Failing one\.<\/a>(?:(?!<\/li>).)*Delivery: 1 still failing/);
    assert.equal((page.match(/Delivery: /g) ?? []).length, 2, 'no hint on the message that is fine');
    assert.doesNotMatch((await viewer.client.get('/inbox')).text, /Delivery: /);
  });
});

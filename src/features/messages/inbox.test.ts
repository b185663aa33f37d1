import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessage, clearOutbox } from '../../../test/helpers/outbox.ts';
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
    const older = await buildMessage(t, { cause: 'declared-input', sourceId: 'zone-1', headline: 'Older <b>one</b>', subject: { kind: 'zone', key: 'example.com' } });
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
      assert.match(page.text, /<td>clock<\/td><td>threshold<\/td>/);
      assert.match(page.text, /<td>coverage<\/td><td>declared-input<\/td>/);
      assert.match(page.text, /api\.example\.com/);
      assert.match(page.text, /2026-01-14 09:30 UTC/);
      assert.match(page.text, /<td>4<\/td>/);
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
    const second = await client.get(`/messages?before=${encodeURIComponent(/before=([^"&]+)/.exec((await client.get('/messages')).text)![1]!)}`);
    assert.match(second.text, /Newest messages/);
  });

  test('a malformed page link is a 400, an unknown message a 404', async () => {
    const { client } = await signedInAs(t, 'viewer');
    assert.equal((await client.get('/inbox?before=nonsense')).status, 400);
    assert.equal((await client.get('/messages/no-such-message')).status, 404);
  });

  test('a message shows where it was delivered; channel URLs and errors only to admins', async () => {
    const admin = await signedInAs(t, 'admin');
    const viewer = await signedInAs(t, 'viewer');
    const a = await buildChannel(t, { createdBy: admin.account.id, url: 'https://hooks.example.com/T0KEN-A/x?key=s3cr3t' });
    const b = await buildChannel(t, { createdBy: admin.account.id, url: 'https://dead.example.net/T0KEN-B' });
    const c = await buildChannel(t, { createdBy: admin.account.id, url: 'https://slow.example.org/T0KEN-C' });
    const id = await buildMessage(t, { headline: 'Moved.' });
    const now = t.clock.now();
    await t.deps.db.updateTable('deliveries').set({ state: 'delivered', attempts: 1, delivered_at: now }).where('channel_id', '=', a.id).execute();
    await t.deps.db.updateTable('deliveries').set({ state: 'dead', attempts: 5, last_error: 'HTTP 500 from receiver' }).where('channel_id', '=', b.id).execute();
    await t.deps.db.updateTable('deliveries').set({ attempts: 2, last_error: 'connection refused' }).where('channel_id', '=', c.id).execute();

    const asAdmin = await admin.client.get(`/messages/${id}`);
    assert.equal(asAdmin.status, 200);
    assert.match(asAdmin.text, /1 delivered, 1 pending, 1 dead-lettered\./);
    assert.match(asAdmin.text, /https:\/\/hooks\.example\.com\/T0KEN-A\/x\?key=s3cr3t/);
    assert.match(asAdmin.text, /Dead-lettered after 5 attempts/);
    assert.match(asAdmin.text, /HTTP 500 from receiver/);
    assert.ok(asAdmin.text.indexOf('dead.example.net') < asAdmin.text.indexOf('slow.example.org'), 'dead-lettered first');

    const asViewer = await viewer.client.get(`/messages/${id}`);
    assert.equal(asViewer.status, 200);
    assert.match(asViewer.text, new RegExp(`channel ${a.id.slice(0, 6)}`));
    assert.match(asViewer.text, new RegExp(`channel ${b.id.slice(0, 6)}`));
    assert.match(asViewer.text, /1 delivered, 1 pending, 1 dead-lettered\./);
    for (const secret of ['T0KEN', 's3cr3t', 'hooks.example.com', 'dead.example.net', 'HTTP 500 from receiver', 'connection refused']) assert.ok(!asViewer.text.includes(secret), secret);

    // The body shown is the stored body; a deleted channel's record stays on the message.
    const body = (await t.deps.db.selectFrom('messages').select('body').where('id', '=', id).executeTakeFirstOrThrow()).body;
    assert.ok(asViewer.text.includes(body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')));
    await t.deps.db.deleteFrom('channels').where('id', '=', a.id).execute();
    assert.match((await viewer.client.get(`/messages/${id}`)).text, /a deleted channel/);
  });

  test('a message routed nowhere says it is kept in the store only', async () => {
    const { client } = await signedInAs(t, 'viewer');
    const id = await buildMessage(t);
    assert.match((await client.get(`/messages/${id}`)).text, /was not sent anywhere/);
  });
});

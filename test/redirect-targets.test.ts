// Every route that takes a return address (`back`), driven for real with the open-redirect corpus: the Location it
// answers is always one of the app's own pages on this origin, never the attacker's.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { TestApp, TestClient } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { OPEN_REDIRECT_CORPUS } from './helpers/open-redirects.ts';
import { buildMessage, clearOutbox } from './helpers/outbox.ts';
import { startAsAdmin } from './helpers/team-factories.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    ({ t, admin } = await startAsAdmin(getDb(), ['sessions', 'message_reads', 'message_read_marks', 'accounts']));
  });

  /**
   * Each route with a `back` field: how to post it with a given return address, the Location it answers when the
   * address is refused, and one address of its own pages it accepts (with the Location that follows).
   */
  const routes = async () => {
    const message = await buildMessage(t);
    return [
      {
        route: 'POST /settings/deliveries/resend',
        post: (back: string) => admin.post('/settings/deliveries/resend', { delivery: 'no-such-delivery', back }),
        fallback: /^\/settings\?tab=deliveries&notice=resend-refused&reason=not-found$/,
        own: [
          `/messages/${message}#deliveries`,
          new RegExp(`^/messages/${message}\\?notice=resend-refused&reason=not-found#deliveries$`),
        ] as const,
      },
      {
        route: 'POST /messages/read',
        post: (back: string) => admin.post('/messages/read', { id: message, back }),
        fallback: /^\/inbox$/,
        own: ['/messages?show=unread', /^\/messages\?show=unread$/] as const,
      },
      {
        route: 'POST /messages/read-all',
        post: (back: string) => admin.post('/messages/read-all', { back }),
        fallback: /^\/inbox\?notice=all-read$/,
        own: ['/messages', /^\/messages\?notice=all-read$/] as const,
      },
    ];
  };

  test('every route with a return address refuses each open-redirect form: its own page, or a 400 with no Location', async () => {
    for (const { route, post, fallback, own } of await routes()) {
      const accepted = await post(own[0]);
      assert.equal(accepted.status, 303, route);
      assert.match(accepted.location!, own[1], `${route}: its own page is returned to`);
      for (const back of OPEN_REDIRECT_CORPUS) {
        const res = await post(back);
        const what = `${route} back=${JSON.stringify(back)}`;
        if (res.status === 400) {
          // The form parser refuses control characters before any redirect is made.
          assert.equal(res.location, undefined, what);
          continue;
        }
        assert.equal(res.status, 303, what);
        assert.match(res.location!, fallback, what);
        assert.equal(new URL(res.location!, 'http://localhost').origin, 'http://localhost', what);
      }
    }
  });
});

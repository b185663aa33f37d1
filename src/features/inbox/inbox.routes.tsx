// GET /inbox and /messages (the same store, every signed-in account), a message's page, and the read marks.
import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { signedIn, type AppEnv, type Ctx } from '../../http/env.ts';
import { idField, parseForm } from '../../http/forms.ts';
import { refuseControlQuery } from '../../http/query.ts';
import { redirectTarget } from '../../http/redirect-target.ts';
import { errorPage, render } from '../../http/render.tsx';
import { resendNotice } from '../delivery/resend-notice.tsx';
import { decodeCursor, encodeCursor, inboxPage, openMessage, parseFilter } from './inbox.service.ts';
import { InboxPage, inboxQuery, MessagePage, readNotice } from './inbox.views.tsx';
import { MARK_READ_MAX, markAllRead, markRead, markUnread, unreadCount } from '../messages/read-state.service.ts';

const readSchema = z.object({
  id: z.array(idField('Not a message id.')).min(1, 'Choose at least one message.').max(MARK_READ_MAX),
  back: z.string().optional(),
});

const readAllSchema = z.object({ back: z.string().optional() });

const unreadSchema = z.object({ id: idField('Not a message id.') });

/** Only our own reading pages are valid return addresses, so the field cannot become an open redirect. */
const READING_PAGES = [/^\/inbox$/, /^\/messages(\/[A-Za-z0-9_-]{1,64})?$/];

function backTo(raw: string | undefined, fallback: string): string {
  return redirectTarget(raw, fallback, READING_PAGES);
}

function selfUrl(c: Ctx): string {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
}

/** The inbox, message pages and read marks: every signed-in account (the gate's default). */
export function inboxRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  const list = (base: '/inbox' | '/messages', title: string) => async (c: Ctx) => {
    const account = signedIn(c).account;
    const rawBefore = c.req.query('before');
    const before = rawBefore === undefined ? undefined : decodeCursor(rawBefore);
    if (rawBefore !== undefined && !before)
      return errorPage(
        c,
        400,
        'Page link not valid',
        'That link to a page of the inbox is not valid. Start again from the inbox.',
      );
    const filter = parseFilter({ show: c.req.query('show'), class: c.req.query('class'), cause: c.req.query('cause') });
    const [page, unread] = await Promise.all([
      inboxPage(deps, account.id, before, filter, account.role === 'admin'),
      unreadCount(deps, account.id),
    ]);
    const olderHref = page.next ? `${base}${inboxQuery(filter, encodeCursor(page.next))}` : undefined;
    const notice = readNotice(c.req.query('notice'));
    return render(
      c,
      title,
      <InboxPage
        base={base}
        items={page.items}
        filter={filter}
        olderHref={olderHref}
        first={!before}
        back={selfUrl(c)}
        now={deps.clock.now()}
        anyUnread={unread > 0}
        notice={notice}
      />,
      200,
      { unread },
    );
  };

  app.get('/inbox', refuseControlQuery, list('/inbox', 'Inbox'));
  app.get('/messages', refuseControlQuery, list('/messages', 'Messages'));

  app.get('/messages/:id{[A-Za-z0-9_-]{1,64}}', async (c) => {
    const account = signedIn(c).account;
    const detail = await openMessage(deps, account.id, c.req.param('id'));
    if (!detail)
      return errorPage(
        c,
        404,
        'No such message',
        'That message does not exist, or it was removed by the retention setting.',
      );
    const isAdmin = account.role === 'admin';
    const notice = await resendNotice(deps, c, isAdmin);
    return render(
      c,
      detail.message.headline,
      <MessagePage detail={detail} isAdmin={isAdmin} now={deps.clock.now()} notice={notice} />,
    );
  });

  app.post('/messages/read', async (c) => {
    const form = parseForm(c, readSchema, { multi: ['id'] });
    if (!form.ok)
      return errorPage(
        c,
        400,
        'Nothing marked',
        form.errors.id ?? form.errors.back ?? 'Choose at least one message to mark read.',
      );
    await markRead(deps, signedIn(c).account.id, form.data.id);
    return c.redirect(backTo(form.data.back, '/inbox'), 303);
  });

  app.post('/messages/read-all', async (c) => {
    const form = parseForm(c, readAllSchema);
    if (!form.ok) return errorPage(c, 400, 'Nothing marked', form.errors.back ?? 'Check the form and try again.');
    await markAllRead(deps, signedIn(c).account.id);
    const back = backTo(form.data.back, '/inbox');
    return c.redirect(`${back.split('?')[0]}?notice=all-read`, 303);
  });

  // Back to the inbox, not the message: opening its page again would mark it read again.
  app.post('/messages/unread', async (c) => {
    const form = parseForm(c, unreadSchema);
    if (!form.ok) return errorPage(c, 400, 'Nothing marked', form.errors.id ?? 'Choose a message to mark unread.');
    await markUnread(deps, signedIn(c).account.id, form.data.id);
    return c.redirect('/inbox?notice=unread', 303);
  });

  return app;
}

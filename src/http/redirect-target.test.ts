// The one judge of return addresses: a corpus of open-redirect forms never gets past it, and the app's own pages do,
// normalised as a browser would read them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPEN_REDIRECT_CORPUS } from '../../test/helpers/open-redirects.ts';
import { APP_PAGES, redirectTarget } from './redirect-target.ts';

test('every open-redirect form falls back to the default', () => {
  for (const raw of OPEN_REDIRECT_CORPUS)
    assert.equal(redirectTarget(raw, '/fallback'), '/fallback', JSON.stringify(raw));
  assert.equal(redirectTarget(undefined, '/fallback'), '/fallback');
});

test('the app’s own pages pass, with their query and fragment, normalised as a browser reads them', () => {
  const id = 'AbC_12-xyz';
  const cases: [string, string][] = [
    ['/', '/'],
    ['/inbox', '/inbox'],
    ['/messages?before=x&show=unread', '/messages?before=x&show=unread'],
    [`/messages/${id}#deliveries`, `/messages/${id}#deliveries`],
    ['/settings?tab=deliveries&state=dead', '/settings?tab=deliveries&state=dead'],
    [`/settings/accounts/${id}`, `/settings/accounts/${id}`],
    [`/settings/channels/${id}?notice=x`, `/settings/channels/${id}?notice=x`],
    ['/profile', '/profile'],
    // Dot segments resolved first: the page they name is judged, not the raw text.
    ['/messages/../inbox', '/inbox'],
    [`/settings/./accounts/../accounts/${id}`, `/settings/accounts/${id}`],
    ['/inbox/%2e%2e/profile', '/profile'],
    // A backslash is a slash to a browser.
    ['\\inbox', '/inbox'],
    // A query is served as the parser encodes it: nothing in it can end the header or start a new URL.
    ['/inbox?x=<script>', '/inbox?x=%3Cscript%3E'],
  ];
  for (const [raw, expected] of cases) assert.equal(redirectTarget(raw, '/fallback'), expected, raw);
  for (const raw of ['/inbox', '/messages', `/messages/${id}`]) {
    for (const page of APP_PAGES)
      if (page.test(raw)) assert.equal(redirectTarget(raw, '/f', [page]), raw, 'a narrower list accepts its own pages');
  }
});

test('a narrower allow-list refuses the app’s other pages', () => {
  const reading = [/^\/inbox$/, /^\/messages(\/[A-Za-z0-9_-]{1,64})?$/];
  assert.equal(redirectTarget('/settings', '/inbox', reading), '/inbox');
  assert.equal(redirectTarget('/messages/../settings', '/inbox', reading), '/inbox');
  assert.equal(redirectTarget('/messages?x=1', '/inbox', reading), '/messages?x=1');
});

test('whatever comes back is a path on this origin', () => {
  for (const raw of [...OPEN_REDIRECT_CORPUS, '/inbox', '/messages/../inbox', '\\inbox']) {
    const target = redirectTarget(raw, '/fallback');
    assert.match(target, /^\/(?![/\\])/, JSON.stringify(raw));
    assert.equal(new URL(target, 'http://svc.test').origin, 'http://svc.test', JSON.stringify(raw));
    assert.doesNotMatch(target, /[\u0000-\u001f\u007f\\]/, JSON.stringify(raw));
  }
});

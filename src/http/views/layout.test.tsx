// The precompiled layout must produce exactly what <Layout> renders, for every shape and any values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { raw } from 'hono/utils/html';
import { Layout, renderLayout, type Viewer } from './layout.tsx';

const hostile = `<script>alert("x")</script> & 'quote' \u0001body\u0001`;
const bodies = ['<p>plain</p>', `<section><form method="post" action="/x"><input type="hidden" name="_csrf" value="t"/></form></section>`];
const viewers: (Viewer | undefined)[] = [undefined];
for (const role of ['admin', 'viewer'] as const) {
  for (const unread of [undefined, 0, 7, 99, 100]) {
    for (const username of ['alice', hostile, 'Zoë 🙂']) viewers.push({ username, role, unread });
  }
}

test('every shape of the precompiled layout renders exactly what <Layout> renders', () => {
  let cases = 0;
  for (const viewer of viewers) {
    for (const csrf of [undefined, '', 'tok-123', hostile]) {
      for (const title of ['Home', hostile]) {
        for (const body of bodies) {
          const expected = (
            <Layout title={title} viewer={viewer} csrf={csrf}>
              {raw(body)}
            </Layout>
          ).toString();
          assert.equal(renderLayout({ title, viewer, csrf }, body), expected, JSON.stringify({ viewer, csrf, title }));
          cases++;
        }
      }
    }
  }
  assert.ok(cases > 400);
});

test('values are escaped: hostile text never becomes markup', () => {
  const html = renderLayout({ title: hostile, viewer: { username: hostile, role: 'viewer', unread: 3 }, csrf: hostile }, '<p>b</p>');
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;/);
  assert.match(html, /aria-label="3 unread">3</);
  assert.match(renderLayout({ title: 't', viewer: { username: 'u', role: 'admin', unread: 100 } }, ''), /aria-label="100 unread">99\+</);
});

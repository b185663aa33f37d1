// The precompiled home body must produce exactly what <HomeBody> renders, for both roles and any username.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HomeBody, renderHomeBody } from './home.views.tsx';

const hostile = `<script>alert("x")</script> & 'quote' \u0001username\u0001`;

test('renderHomeBody renders exactly what <HomeBody> renders', () => {
  for (const role of ['admin', 'viewer'] as const) {
    for (const username of ['alice', hostile, 'Zoë 🙂', '']) {
      const account = { username, role };
      assert.equal(renderHomeBody(account), (<HomeBody account={account} />).toString(), JSON.stringify(account));
    }
  }
});

test('the username is escaped and only admins get the settings link', () => {
  const html = renderHomeBody({ username: hostile, role: 'viewer' });
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;/);
  assert.doesNotMatch(html, /href="\/settings"/);
  assert.match(renderHomeBody({ username: 'a', role: 'admin' }), /href="\/settings"/);
});

// The home body: who is signed in (escaped), and the settings link for admins only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HomeBody } from './home.views.tsx';

const hostile = `<script>alert("x")</script> & 'quote'`;

const body = async (account: { username: string; role: 'admin' | 'viewer' }) => (await (<HomeBody account={account} />)).toString();

test('the username is escaped and only admins get the settings link', async () => {
  const html = await body({ username: hostile, role: 'viewer' });
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /Signed in as <strong>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;<\/strong> with the role <strong>viewer<\/strong>/);
  assert.match(html, /href="\/inbox"/);
  assert.doesNotMatch(html, /href="\/settings"/);
  assert.match(await body({ username: 'a', role: 'admin' }), /href="\/settings"/);
});

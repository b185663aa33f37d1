// The home body: who is signed in (escaped), the admin parts for admins only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HomeView } from './home.service.ts';
import { HomeBody } from './home.views.tsx';

const hostile = `<script>alert("x")</script> & 'quote'`;

const empty: HomeView = { unread: { count: 0, latest: [] } };

const body = async (account: { username: string; role: 'admin' | 'viewer' }, view: HomeView = empty) =>
  (await (<HomeBody account={account} view={view} now={0} />)).toString();

test('the username is escaped and only admins get the settings link', async () => {
  const html = await body({ username: hostile, role: 'viewer' });
  assert.doesNotMatch(html, /<script>/);
  assert.match(
    html,
    /Signed in as <strong>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;<\/strong> with the role <strong>viewer<\/strong>/,
  );
  assert.match(html, /href="\/inbox"/);
  assert.doesNotMatch(html, /href="\/settings"/);
  assert.match(html, /You are all caught up\./);
  const admin: HomeView = {
    ...empty,
    admin: { failing: { count: 0, rows: [] }, deadLastDay: 0, openInvitations: 0, todo: [] },
  };
  assert.match(await body({ username: 'a', role: 'admin' }, admin), /href="\/settings"/);
});

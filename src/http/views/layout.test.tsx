// What the layout shows: the title, and for a signed-in viewer their name, role, bell and sign-out form; values escaped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Layout, type Viewer } from './layout.tsx';

const hostile = `<script>alert("x")</script> & 'quote'`;

async function page(title: string, viewer?: Viewer, csrf?: string): Promise<string> {
  return (
    await (
      <Layout title={title} viewer={viewer} csrf={csrf}>
        <p>body</p>
      </Layout>
    )
  ).toString();
}

test('a signed-in viewer sees their name, role, the bell and a sign-out form carrying the form token', async () => {
  const html = await page('Home', { username: 'alice', role: 'viewer', unread: 7 }, 'tok-123');
  assert.match(html, /<title>Home · svc<\/title>/);
  assert.match(html, /<h1>Home<\/h1><p>body<\/p>/);
  assert.match(html, /<span class="username">alice<\/span> <span class="role role-viewer">viewer<\/span>/);
  assert.match(html, /<span class="bell" aria-label="7 unread">7<\/span>/);
  assert.match(html, /<form method="post" action="\/logout" class="inline"><input type="hidden" name="_csrf" value="tok-123"\/>/);
  assert.doesNotMatch(html, /href="\/settings"/, 'no settings link for a viewer');
  assert.match(await page('Home', { username: 'root', role: 'admin', unread: 0 }), /<a href="\/settings">Settings<\/a>/);
});

test('the bell shows counts up to 99 and "99+" beyond, with the count in its label', async () => {
  for (const [unread, text] of [[0, '0'], [99, '99'], [100, '99+']] as const) {
    assert.match(await page('t', { username: 'u', role: 'admin', unread }), new RegExp(`aria-label="${unread} unread">${text.replace('+', '\\+')}<`));
  }
});

test('signed out: no navigation, no name, no sign-out form', async () => {
  const html = await page('Sign in');
  assert.doesNotMatch(html, /<nav|class="bell"|class="username"|\/logout/);
  assert.match(html, /<h1>Sign in<\/h1>/);
});

test('values are escaped: hostile text never becomes markup', async () => {
  const html = await page(hostile, { username: hostile, role: 'viewer', unread: 3 }, hostile);
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /<title>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39; · svc<\/title>/);
  assert.match(html, /<span class="username">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;<\/span>/);
  assert.match(html, /name="_csrf" value="&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;"/);
});

// What the layout shows: the title, and for a signed-in viewer their name, role, bell and sign-out form; values
// escaped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Layout, type Viewer } from './layout.tsx';

const hostile = `<script>alert("x")</script> & 'quote'`;

async function page(title: string, viewer?: Viewer, csrf?: string, path?: string): Promise<string> {
  return (
    await (
      <Layout title={title} viewer={viewer} csrf={csrf} path={path}>
        <p>body</p>
      </Layout>
    )
  ).toString();
}

test('a signed-in viewer sees their name, role, the bell and a sign-out form carrying the form token', async () => {
  const html = await page('Home', { username: 'alice', role: 'viewer', unread: 7 }, 'tok-123');
  assert.match(html, /^<!doctype html><html lang="en">/);
  assert.match(html, /<title>Home · svc<\/title>/);
  assert.match(html, /<body><a class="skip-link" href="#main">Skip to content<\/a>/, 'the skip link comes first');
  assert.match(html, /<main id="main" tabindex="-1"><h1>Home<\/h1><p>body<\/p>/);
  assert.match(
    html,
    /<span class="username" title="alice">alice<\/span> <span class="role role-viewer">viewer<\/span>/,
  );
  assert.match(html, /<span class="bell">7<span class="visually-hidden"> unread<\/span><\/span>/);
  assert.match(
    html,
    /<form method="post" action="\/logout" class="inline"><input type="hidden" name="_csrf" value="tok-123"\/>/,
  );
  assert.doesNotMatch(html, /href="\/settings"/, 'no settings link for a viewer');
  assert.match(
    await page('Home', { username: 'root', role: 'admin', unread: 0 }),
    /<a href="\/settings">Settings<\/a>/,
  );
});

test('the bell shows no badge at 0, counts up to 99 and "99+" beyond, read out as "<n> unread"', async () => {
  assert.doesNotMatch(await page('t', { username: 'u', role: 'admin', unread: 0 }), /class="bell"/);
  for (const [unread, text] of [
    [1, '1'],
    [99, '99'],
    [100, '99\\+'],
  ] as const) {
    assert.match(
      await page('t', { username: 'u', role: 'admin', unread }),
      new RegExp(`<span class="bell">${text}<span class="visually-hidden"> unread</span></span>`),
    );
  }
});

test('the current navigation item carries aria-current="page"; Home only on / itself', async () => {
  const admin: Viewer = { username: 'root', role: 'admin', unread: 0 };
  const current = async (path: string) =>
    /<a href="([^"]+)" aria-current="page">/.exec(await page('t', admin, undefined, path))?.[1];
  assert.equal(await current('/'), '/');
  assert.equal(await current('/inbox'), '/inbox');
  assert.equal(await current('/messages/abc'), '/inbox');
  assert.equal(await current('/settings'), '/settings');
  assert.equal(await current('/profile/tokens'), '/profile');
  assert.equal(await current('/profileX'), undefined);
  assert.equal(await current('/no-such-page'), undefined);
});

test('signed out: no navigation, no name, no sign-out form', async () => {
  const html = await page('Sign in');
  assert.doesNotMatch(html, /<nav|class="bell"|class="username"|\/logout/);
  assert.match(html, /<h1>Sign in<\/h1>/);
});

test('values are escaped: hostile text never becomes markup', async () => {
  const html = await page(hostile, { username: hostile, role: 'viewer', unread: 3 }, hostile);
  assert.doesNotMatch(html, /<script>/);
  assert.match(
    html,
    /<title>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39; · svc<\/title>/,
  );
  assert.match(
    html,
    /<span class="username" title="&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;<\/span>/,
  );
  assert.match(html, /name="_csrf" value="&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;quote&#39;"/);
});

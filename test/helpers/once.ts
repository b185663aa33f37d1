// Test shortcuts for minting forms: each carries a one-time token (`_once`) and answers with a
// redirect to the page that shows the secret once. These read the token off the page like a browser would.
import assert from 'node:assert/strict';
import type { TestClient, TestResponse } from './app.ts';

/** The `_once` token of the form posting to `action` on a page. */
export function onceOf(page: string, action: string): string {
  const escaped = action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const form = new RegExp(`<form[^>]*action="${escaped}"[^>]*>([\\s\\S]*?)</form>`).exec(page);
  assert.ok(form, `a form posting to ${action} is on the page`);
  const once = /name="_once" value="([^"]+)"/.exec(form[1]!);
  assert.ok(once, `the form posting to ${action} carries a one-time token`);
  return once[1]!;
}

/**
 * Opens `pagePath`, submits its form posting to `action` with `fields` and its one-time token, and follows the
 * redirect: `post` is the POST's answer, `page` the page after it (undefined when the POST did not redirect).
 */
export async function submitMinting(
  client: TestClient,
  pagePath: string,
  action: string,
  fields: Record<string, string> = {},
): Promise<{ post: TestResponse; page: TestResponse | undefined; once: string }> {
  const form = await client.get(pagePath);
  const once = onceOf(form.text, action);
  const post = await client.post(action, { ...fields, _once: once });
  const page = post.status === 303 && post.location ? await client.get(post.location) : undefined;
  return { post, page, once };
}

/**
 * "Confirm it's you" on the profile with the password (or a code), through the page's one confirm form: opens the
 * session's 10-minute window for every act that needs it. `_asked` (the section that needed it) is not sent: one
 * confirmation serves them all.
 */
export async function confirmItsMe(
  client: TestClient,
  secret: string,
  _asked?: 'tokens' | 'second-factor' | 'sso',
): Promise<void> {
  await client.get('/profile');
  const res = await client.post('/profile/reauth', { secret });
  assert.equal(res.status, 303, `confirmation refused (${res.status})`);
}

/**
 * "Confirm it's you" from an admin's Settings (the team tab, or the page of `account`): the same window, opened before
 * an admin invitation or a reset link.
 */
export async function confirmInSettings(client: TestClient, secret: string, account?: string): Promise<void> {
  await client.get(account === undefined ? '/settings?tab=team' : `/settings/accounts/${account}`);
  const res = await client.post('/settings/accounts/reauth', account === undefined ? { secret } : { secret, account });
  assert.equal(res.status, 303, `confirmation refused (${res.status})`);
}

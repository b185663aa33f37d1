import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { inSession, signedIn, type AppEnv, type SessionContext } from './env.ts';
import { classifyAccess, enforceGate } from './middleware.ts';

const account = { id: 'acct', username: 'ada', role: 'viewer', totp_enabled: 0 } as const;
const session = (stage: SessionContext['stage']): SessionContext => ({
  idHash: 'h',
  publicId: 'p',
  stage,
  csrfToken: 't',
  account,
});

/**
 * An app whose every path answers with the session that `read` finds (its username and stage), or the error it threw.
 */
function appWith(found: SessionContext | undefined, read: typeof signedIn | typeof inSession) {
  const app = new Hono<AppEnv>();
  app.use(classifyAccess());
  app.use(async (c, next) => {
    c.set('session', found);
    await next();
  });
  app.all('*', (c) => {
    const s = read(c);
    return c.text(`${s.account.username} ${s.stage}`);
  });
  app.onError((err, c) => c.text(err.message, 500));
  return app;
}

test('signedIn() hands over the full session on a signed-in path and throws anywhere the gate does not promise one', async () => {
  const full = appWith(session('full'), signedIn);
  for (const path of ['/profile', '/settings', '/inbox'])
    assert.equal(await (await full.request(path)).text(), 'ada full', path);
  // A session that happens to be there does not make a public path, a sign-in step or the API a signed-in one.
  for (const [path, access] of [
    ['/login', 'public'],
    ['/login/totp', 'pending'],
    ['/api/messages', 'api'],
  ] as const) {
    const res = await full.request(path);
    assert.equal(res.status, 500, path);
    assert.equal(
      await res.text(),
      `signedIn() on GET ${path}, a '${access}' path: the gate does not promise a session there`,
    );
  }
  // Without the gate in front, a signed-in path may see no session or one owing a second factor: said, never used.
  for (const found of [undefined, session('totp')]) {
    const res = await appWith(found, signedIn).request('/profile');
    assert.equal(
      await res.text(),
      'signedIn() on GET /profile found no full session: is the gate (enforceGate) installed?',
    );
  }
});

test('inSession() hands over a session in any stage on a sign-in step or a signed-in path, and throws elsewhere', async () => {
  assert.equal(
    await (await appWith(session('totp'), inSession).request('/login/totp', { method: 'POST' })).text(),
    'ada totp',
  );
  assert.equal(await (await appWith(session('full'), inSession).request('/profile')).text(), 'ada full');
  const res = await appWith(session('full'), inSession).request('/login');
  assert.equal(
    await res.text(),
    "inSession() on GET /login, a 'public' path: the gate does not promise a session there",
  );
  assert.equal(
    await (await appWith(undefined, inSession).request('/logout', { method: 'POST' })).text(),
    'inSession() on POST /logout found no session: is the gate (enforceGate) installed?',
  );
});

test("the path's access class is decided once, by the first step, and the gate acts on the class it kept", async () => {
  const app = new Hono<AppEnv>();
  app.use(classifyAccess());
  // A step that changes the kept class: the gate must follow it rather than classify the path again.
  app.use(async (c, next) => {
    if (c.req.path === '/settings/opened') c.set('access', 'public');
    await next();
  });
  app.use(async (c, next) => {
    c.set('session', undefined);
    await next();
  });
  app.use(enforceGate());
  app.all('*', (c) => c.text(c.get('access')));
  assert.equal(await (await app.request('/login')).text(), 'public');
  assert.equal((await app.request('/profile')).headers.get('location'), '/login');
  assert.equal(await (await app.request('/settings/opened')).text(), 'public');
  assert.equal((await app.request('/settings/closed')).headers.get('location'), '/login');
});

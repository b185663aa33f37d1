// The Content-Security-Policy of every page: script is allowed exactly on the pages that run a WebAuthn ceremony (the
// sign-in page, the second-factor step of an account holding a passkey, the page that adds a passkey), by 'self' and
// never 'unsafe-inline' or 'unsafe-eval', and only those pages carry a script tag: svc's one ceremony script, pinned by
// its integrity hash. Every other page keeps `script-src 'none'`. The table names every GET route the app registers.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadCeremonyScript } from '../src/http/ceremony.tsx';
import { CEREMONY_CSP } from '../src/http/csp.ts';
import { buildTestApp, type TestApp, type TestClient } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { buildAccount, signIn } from './helpers/factories.ts';
import { atEnrolStep, atTotpStep, enrolTotp } from './helpers/second-factor.ts';

const NO_SCRIPT =
  "default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
const script = loadCeremonyScript(new URL('../static/passkeys.js', import.meta.url));
const STALE_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** Who looks: nobody, a signed-in admin (confirmed), a session at the second factor (with or without a passkey). */
type Actor = 'anon' | 'admin' | 'step-passkey' | 'step-totp' | 'enrol';

/** Every GET route: who reads it, the paths to read, and whether it runs a ceremony. */
const PAGES: Record<string, { actor: Actor; paths: string[]; ceremony?: boolean }> = {
  '/static/app.css': { actor: 'anon', paths: ['/static/app.css'] },
  [script.href]: { actor: 'anon', paths: [script.href] },
  '/healthz': { actor: 'anon', paths: ['/healthz'] },
  '/readyz': { actor: 'anon', paths: ['/readyz'] },
  '/setup': { actor: 'anon', paths: ['/setup'] },
  '/login': { actor: 'anon', paths: ['/login', '/login?notice=signed-out'], ceremony: true },
  '/': { actor: 'admin', paths: ['/'] },
  '/settings': {
    actor: 'admin',
    paths: [
      '/settings',
      '/settings?tab=channels',
      '/settings?tab=sso',
      '/settings?tab=team',
      '/settings?tab=deliveries',
    ],
  },
  '/settings/channels/:id': { actor: 'admin', paths: [`/settings/channels/${STALE_ID}`] },
  '/settings/deliveries/resend-all': { actor: 'admin', paths: [`/settings/deliveries/resend-all?channel=${STALE_ID}`] },
  '/invite': { actor: 'anon', paths: [`/invite?token=${'x'.repeat(43)}`] },
  '/reset': { actor: 'anon', paths: [`/reset?token=${'x'.repeat(43)}`] },
  '/settings/accounts/:id': { actor: 'admin', paths: [`/settings/accounts/${STALE_ID}`] },
  '/inbox': { actor: 'admin', paths: ['/inbox'] },
  '/messages': { actor: 'admin', paths: ['/messages'] },
  '/messages/:id{[A-Za-z0-9_-]{1,64}}': { actor: 'admin', paths: [`/messages/${STALE_ID}`] },
  '/login/totp': { actor: 'step-passkey', paths: ['/login/totp'], ceremony: true },
  '/login/enrol': { actor: 'enrol', paths: ['/login/enrol'] },
  '/profile': { actor: 'admin', paths: ['/profile', '/profile?notice=passkey-added'] },
  '/profile/totp': { actor: 'admin', paths: ['/profile/totp'] },
  '/profile/passkeys/add': { actor: 'admin', paths: ['/profile/passkeys/add'], ceremony: true },
  '/profile/recovery-codes': { actor: 'admin', paths: ['/profile/recovery-codes?from=passkey'] },
  '/login/sso/:slug': { actor: 'anon', paths: ['/login/sso/nowhere'] },
  '/login/sso/:slug/callback': { actor: 'anon', paths: ['/login/sso/nowhere/callback?code=c&state=s'] },
  '/login/sso/:slug/sign-out': { actor: 'anon', paths: ['/login/sso/nowhere/sign-out'] },
  '/profile/sso/:slug/link': { actor: 'admin', paths: ['/profile/sso/nowhere/link'] },
  '/profile/sso/:slug/link/callback': { actor: 'admin', paths: ['/profile/sso/nowhere/link/callback?code=c&state=s'] },
};

forEachDialect((getDb) => {
  let t: TestApp;
  const clients = new Map<Actor, TestClient>();
  before(async () => {
    t = buildTestApp(getDb());
    const admin = await buildAccount(t, { role: 'admin' });
    const client = await signIn(t, admin);
    await client.get('/profile');
    await client.post('/profile/reauth', { secret: admin.password });
    clients.set('admin', client);
    clients.set('anon', t.client());
    const holder = await buildAccount(t);
    await t.deps.db
      .insertInto('passkeys')
      .values({
        id: 'csp-key',
        account_id: holder.id,
        credential_id: 'Y3NwLWtleQ',
        public_key: 'AA',
        counter: 0,
        transports: '',
        device_type: 'singleDevice',
        backed_up: 0,
        name: 'Key',
        created_at: t.clock.now(),
        last_used_at: null,
      })
      .execute();
    clients.set('step-passkey', await atTotpStep(t, holder));
    const totp = await buildAccount(t);
    await enrolTotp(t, totp);
    clients.set('step-totp', await atTotpStep(t, totp));
    clients.set('enrol', await atEnrolStep(t, await buildAccount(t, { enrolPrompt: true })));
  });

  test('the table names every page the app registers', () => {
    const registered = [...new Set(t.app.routes.filter((r) => r.method === 'GET').map((r) => r.path))].sort();
    assert.deepEqual(registered, Object.keys(PAGES).sort(), 'a new page needs a row here');
  });

  test('script is allowed exactly on the pages that run a ceremony, and only svc’s own script by its hash', async () => {
    assert.equal(CEREMONY_CSP, NO_SCRIPT.replace("script-src 'none'", "script-src 'self'"));
    const tag = `<script src="${script.href}" integrity="${script.integrity}" defer=""></script>`;
    for (const [pattern, page] of Object.entries(PAGES)) {
      for (const path of page.paths) {
        const res = await clients.get(page.actor)!.get(path);
        const label = `${page.actor} GET ${path} (${pattern}): ${res.status}`;
        assert.equal(res.headers.get('content-security-policy'), page.ceremony ? CEREMONY_CSP : NO_SCRIPT, label);
        if (page.ceremony) assert.equal(res.status, 200, label);
        assert.equal([...res.text.matchAll(/<script/gi)].length, page.ceremony ? 1 : 0, label);
        if (page.ceremony) assert.ok(res.text.includes(tag), `${label}: the one script tag`);
      }
    }
  });

  test('the step of an account without a passkey runs no script; the ceremony script is served cached, as JavaScript', async () => {
    const step = await clients.get('step-totp')!.get('/login/totp');
    assert.equal(step.headers.get('content-security-policy'), NO_SCRIPT);
    assert.doesNotMatch(step.text, /<script/i);
    assert.doesNotMatch(step.text, /Use your passkey/);
    const res = await t.client().get(script.href);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.text, script.body);
    // The bundled library's MIT license asks for its notice in every copy: the served script opens with it.
    assert.match(res.text, /^\/\*! Bundles @simplewebauthn\/browser \d+\.\d+\.\d+ \(MIT license\):/);
    assert.match(res.text, /Copyright \(c\) \d{4} Matthew Miller/);
    assert.match(res.text, /The above copyright notice and this permission notice shall be included/);
  });
});

// NUL (and other control characters) in any form field, query parameter or path parameter is a 4xx,
// never a 500 (PostgreSQL refuses U+0000), and never a 'request failed' log line. The tables cover every registered
// route.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { before, test } from 'node:test';
import { loadCeremonyScript } from '../src/http/ceremony.tsx';
import { CONTROL_CHARACTERS_MESSAGE } from '../src/http/forms.ts';
import { mintInvitation } from '../src/features/team/invitations.service.ts';
import { DEFAULT_EXPIRY } from '../src/features/tokens/tokens.service.ts';
import { buildTestApp, type TestApp, type TestClient, type TestResponse } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { buildAccount, signIn } from './helpers/factories.ts';
import { buildChannel } from './helpers/outbox.ts';
import { atEnrolStep, atTotpStep, enrolTotp } from './helpers/second-factor.ts';

const SETUP_TOKEN = 'nul-bytes-setup-token-0123456789';
const ceremonyScriptPath = loadCeremonyScript(new URL('../static/passkeys.js', import.meta.url)).href;
/** A well-formed id that names no row, so the acts stay no-ops. */
const STALE_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/**
 * Who posts a form or reads a page: nobody, the first-run visitor, a signed-in admin, or a session owing a second
 * factor.
 */
type Actor = 'anon' | 'setup' | 'admin' | 'totp' | 'enrol';

/** Rows that tests need to exist (a real channel, an open invitation, a viewer to act on). */
interface Fixtures {
  channelId: string;
  viewerId: string;
  inviteToken: string;
}

/** A fresh one-time token, the hidden field of every minting form. */
const once = () => crypto.randomBytes(32).toString('base64url');

/** Every POST route: who posts it and plausible values for each of its fields (one row per field gets a NUL). */
const FORMS: Record<string, { actor: Actor; fields: (f: Fixtures) => Record<string, string> }> = {
  '/setup': {
    actor: 'setup',
    fields: () => ({ token: SETUP_TOKEN, username: 'first-admin', password: 'a long enough password' }),
  },
  '/login': { actor: 'anon', fields: () => ({ username: 'admin', password: 'not the password' }) },
  '/logout': { actor: 'admin', fields: () => ({}) },
  '/login/totp': { actor: 'totp', fields: () => ({ code: '123456' }) },
  '/login/passkey/options': { actor: 'anon', fields: () => ({}) },
  '/login/passkey': { actor: 'anon', fields: () => ({ answer: '{"id":"x"}' }) },
  '/login/totp/passkey/options': { actor: 'totp', fields: () => ({}) },
  '/login/totp/passkey': { actor: 'totp', fields: () => ({ answer: '{"id":"x"}' }) },
  '/login/enrol': { actor: 'enrol', fields: () => ({ action: 'confirm', code: '123456', _once: once() }) },
  '/invite': {
    actor: 'anon',
    fields: (f) => ({ token: f.inviteToken, username: 'invited-user', password: 'another long password' }),
  },
  '/settings/accounts': { actor: 'admin', fields: () => ({ role: 'viewer', note: 'for Dana', _once: once() }) },
  '/settings/accounts/role': { actor: 'admin', fields: (f) => ({ account: f.viewerId, role: 'viewer' }) },
  '/settings/accounts/reenroll': { actor: 'admin', fields: () => ({ account: STALE_ID }) },
  '/settings/accounts/remove': { actor: 'admin', fields: () => ({ account: STALE_ID, confirm: 'nobody' }) },
  '/settings/accounts/invitations/revoke': { actor: 'admin', fields: () => ({ invitation: STALE_ID }) },
  '/settings/accounts/suspend': { actor: 'admin', fields: () => ({ account: STALE_ID }) },
  '/settings/accounts/reactivate': { actor: 'admin', fields: () => ({ account: STALE_ID }) },
  '/settings/accounts/sign-out': { actor: 'admin', fields: () => ({ account: STALE_ID, revoke_tokens: 'on' }) },
  '/settings/accounts/revoke-tokens': { actor: 'admin', fields: () => ({ account: STALE_ID }) },
  '/settings/accounts/reset-link': { actor: 'admin', fields: () => ({ account: STALE_ID, _once: once() }) },
  '/settings/accounts/reauth': { actor: 'admin', fields: () => ({ secret: 'not the password', account: STALE_ID }) },
  '/settings/accounts/reassign': { actor: 'admin', fields: () => ({ account: STALE_ID, to: STALE_ID }) },
  '/reset': { actor: 'anon', fields: () => ({ token: 'x'.repeat(43), password: 'a long enough password' }) },
  '/settings/deliveries/resend': {
    actor: 'admin',
    fields: () => ({ delivery: STALE_ID, back: '/settings?tab=deliveries' }),
  },
  '/messages/read': { actor: 'admin', fields: () => ({ id: STALE_ID, back: '/inbox' }) },
  '/messages/read-all': { actor: 'admin', fields: () => ({ back: '/inbox' }) },
  '/messages/unread': { actor: 'admin', fields: () => ({ id: STALE_ID, back: '/inbox' }) },
  '/settings/channels': {
    actor: 'admin',
    fields: () => ({ url: 'https://hooks.example.com/nul', classes: 'drift', secret: 'whsec-nul-bytes' }),
  },
  '/settings/channels/update': {
    actor: 'admin',
    fields: (f) => ({
      id: f.channelId,
      url: 'https://hooks.example.com/nul',
      classes: 'drift',
      enabled: 'on',
      secret: 'whsec-nul-bytes',
      clear_secret: 'on',
    }),
  },
  '/settings/channels/delete': { actor: 'admin', fields: () => ({ id: STALE_ID }) },
  '/settings/channels/check': { actor: 'admin', fields: () => ({ id: STALE_ID }) },
  '/settings/deliveries/resend-all': { actor: 'admin', fields: () => ({ channel: STALE_ID }) },
  '/settings/channels/retention': { actor: 'admin', fields: () => ({ days: '30' }) },
  '/profile/password': {
    actor: 'admin',
    fields: () => ({ current: 'not the password', password: 'a brand new password' }),
  },
  '/profile/reauth': { actor: 'admin', fields: () => ({ secret: 'not the password', section: 'tokens' }) },
  '/profile/totp/start': { actor: 'admin', fields: () => ({ _once: once() }) },
  '/profile/totp/confirm': { actor: 'admin', fields: () => ({ code: '123456', _once: once() }) },
  '/profile/recovery-codes': { actor: 'admin', fields: () => ({ _once: once() }) },
  '/profile/recovery-codes/download': { actor: 'admin', fields: () => ({ code: '0123a-4567b-89cde' }) },
  '/profile/sessions/end': { actor: 'admin', fields: () => ({ session: STALE_ID }) },
  '/profile/passkeys/options': { actor: 'admin', fields: () => ({}) },
  '/profile/passkeys/add': { actor: 'admin', fields: () => ({ answer: '{"id":"x"}', name: 'Laptop' }) },
  '/profile/passkeys/rename': { actor: 'admin', fields: () => ({ id: STALE_ID, name: 'Laptop' }) },
  '/profile/passkeys/remove': { actor: 'admin', fields: () => ({ id: STALE_ID, confirm: 'yes' }) },
  '/profile/tokens': { actor: 'admin', fields: () => ({ name: 'nul bytes', expiry: DEFAULT_EXPIRY, _once: once() }) },
  '/profile/tokens/revoke': { actor: 'admin', fields: () => ({ token: STALE_ID }) },
  '/profile/sso/unlink': { actor: 'admin', fields: () => ({ id: STALE_ID }) },
  // A provider's server posts it (no form token); a made-up slug names no provider, so nothing is verified.
  '/login/sso/:slug/backchannel-logout': { actor: 'anon', fields: () => ({ logout_token: 'eyJ.eyJ.sig' }) },
  '/settings/sso': {
    actor: 'admin',
    fields: () => ({
      display_name: 'Nul IdP',
      slug: 'nul-idp',
      issuer: 'https://idp.example.test',
      client_id: 'svc',
      client_secret: 'shh',
    }),
  },
  '/settings/sso/update': {
    actor: 'admin',
    fields: () => ({
      id: STALE_ID,
      display_name: 'Nul IdP',
      slug: 'nul-idp',
      issuer: 'https://idp.example.test',
      client_id: 'svc',
      enabled: 'on',
    }),
  },
  '/settings/sso/secret': {
    actor: 'admin',
    fields: () => ({ id: STALE_ID, client_secret: 'shh', clear_secret: 'on' }),
  },
  '/settings/sso/delete': { actor: 'admin', fields: () => ({ id: STALE_ID }) },
  '/settings/sso/identity/remove': { actor: 'admin', fields: () => ({ id: STALE_ID }) },
};

/**
 * Every GET route: who reads it, values for its path parameters, and the query strings it reads (one row per
 * parameter).
 */
const PAGES: Record<string, { actor: Actor; params?: Record<string, string>; queries?: Record<string, string>[] }> = {
  '/static/app.css': { actor: 'anon' },
  // The ceremony script, at a path named by its content.
  [ceremonyScriptPath]: { actor: 'anon' },
  '/healthz': { actor: 'anon' },
  '/readyz': { actor: 'anon' },
  '/setup': { actor: 'setup', queries: [{ token: SETUP_TOKEN }] },
  '/login': { actor: 'anon', queries: [{ notice: 'signed-out' }, { state: 'back-from-the-provider' }] },
  '/': { actor: 'admin' },
  '/settings': {
    actor: 'admin',
    queries: [
      { tab: 'channels', edit: STALE_ID, page: '1', notice: 'created' },
      { tab: 'sso', notice: 'issuer-changed', removed: '1' },
      { tab: 'team', notice: 'removed' },
      { tab: 'deliveries', notice: 'resent-all', count: '3', state: 'dead', channel: STALE_ID, page: '2' },
    ],
  },
  '/settings/channels/:id': { actor: 'admin', params: { id: STALE_ID }, queries: [{ notice: 'updated' }] },
  '/settings/deliveries/resend-all': { actor: 'admin', queries: [{ channel: STALE_ID }] },
  '/invite': { actor: 'anon', queries: [{ token: 'x'.repeat(43) }] },
  '/reset': { actor: 'anon', queries: [{ token: 'x'.repeat(43) }] },
  '/settings/accounts/:id': {
    actor: 'admin',
    params: { id: STALE_ID },
    queries: [{ notice: 'suspended', confirm: 'reassign', to: STALE_ID }],
  },
  '/inbox': {
    actor: 'admin',
    queries: [{ before: 'x', notice: 'all-read', show: 'unread', class: 'drift', cause: 'drift' }],
  },
  '/messages': { actor: 'admin', queries: [{ before: 'x', notice: 'all-read' }] },
  '/messages/:id{[A-Za-z0-9_-]{1,64}}': { actor: 'admin', params: { id: STALE_ID } },
  '/login/totp': { actor: 'totp' },
  '/login/enrol': { actor: 'enrol' },
  '/profile': { actor: 'admin', queries: [{ notice: 'token-revoked', sso: 'linked', reveal: 'token' }] },
  '/profile/totp': { actor: 'admin' },
  '/profile/passkeys/add': { actor: 'admin' },
  '/profile/recovery-codes': { actor: 'admin', queries: [{ from: 'profile' }] },
  '/login/sso/:slug': { actor: 'anon', params: { slug: 'nul-idp' } },
  '/login/sso/:slug/callback': {
    actor: 'anon',
    params: { slug: 'nul-idp' },
    queries: [{ code: 'c', state: 's', iss: 'https://idp.example.test' }],
  },
  '/login/sso/:slug/sign-out': { actor: 'anon', params: { slug: 'nul-idp' } },
  '/profile/sso/:slug/link': { actor: 'admin', params: { slug: 'nul-idp' } },
  '/profile/sso/:slug/link/callback': {
    actor: 'admin',
    params: { slug: 'nul-idp' },
    queries: [{ code: 'c', state: 's' }],
  },
};

/** The value with a NUL inside it (as `adm%00in`), or a lone NUL for an empty one. */
function withNul(value: string): string {
  return value.length === 0 ? '\u0000' : `${value.slice(0, 1)}\u0000${value.slice(1)}`;
}

/** The concrete path of a route pattern, with `:name` (and its `{regex}`) replaced by the given values. */
function pathOf(pattern: string, params: Record<string, string>): string {
  return pattern.replace(/:(\w+)(\{[^}]*\}+)?/g, (_, name: string) => encodeURIComponent(params[name]!));
}

/** Variations of a GET page: each path parameter and each query parameter in turn holding a NUL. */
function pageRows(pattern: string): string[] {
  const page = PAGES[pattern]!;
  const params = page.params ?? {};
  const rows = Object.keys(params).map((name) => pathOf(pattern, { ...params, [name]: withNul(params[name]!) }));
  const path = pathOf(pattern, params);
  for (const query of page.queries ?? []) {
    for (const name of Object.keys(query))
      rows.push(`${path}?${new URLSearchParams({ ...query, [name]: withNul(query[name]!) })}`);
  }
  return rows;
}

forEachDialect((getDb) => {
  let t: TestApp;
  before(() => {
    t = buildTestApp(getDb(), { setupToken: SETUP_TOKEN });
  });

  /**
   * What went wrong with one request of route `key` ("METHOD /pattern"), or nothing for a 4xx without a failure logged.
   */
  async function check(
    key: string,
    what: string,
    send: () => Promise<TestResponse>,
  ): Promise<{ key: string; problem: string } | undefined> {
    const logged = t.logs.length;
    const res = await send();
    const failed = t.logs.slice(logged).some((line) => line.includes('"request failed"'));
    if (res.status >= 400 && res.status < 500 && !failed) return undefined;
    return { key, problem: `${what}: ${res.status}${failed ? ' (request failed logged)' : ''}` };
  }

  /** Fails on any problem found. */
  function judge(results: ({ key: string; problem: string } | undefined)[]) {
    assert.deepEqual(
      results.filter((r) => r !== undefined).map((r) => r.problem),
      [],
    );
  }

  test('the tables name every route the app registers', () => {
    const registered = (method: string) =>
      [...new Set(t.app.routes.filter((r) => r.method === method).map((r) => r.path))].sort();
    assert.deepEqual(registered('POST'), Object.keys(FORMS).sort(), 'a new form route needs a row in FORMS');
    assert.deepEqual(registered('GET'), Object.keys(PAGES).sort(), 'a new page needs a row in PAGES');
  });

  // Runs first: setup is open only while the database has no account.
  test('first run: NUL in the setup form or its link is refused while setup is open', async () => {
    const client = t.client();
    const results = [];
    for (const row of pageRows('/setup')) results.push(await check('GET /setup', `GET ${row}`, () => client.get(row)));
    await client.get(`/setup?token=${SETUP_TOKEN}`);
    const fields = FORMS['/setup']!.fields({} as Fixtures);
    for (const name of Object.keys(fields)) {
      results.push(
        await check('POST /setup', `POST /setup ${name}`, () =>
          client.post('/setup', { ...fields, [name]: withNul(fields[name]!) }),
        ),
      );
    }
    judge(results);
    const accounts = await t.deps.db.selectFrom('accounts').select('id').execute();
    assert.equal(accounts.length, 0, 'no account was created from a refused form');
  });

  /** One client per actor, and the rows the forms need. */
  async function actors(): Promise<{ clients: Record<Actor, TestClient>; fixtures: Fixtures }> {
    const admin = await buildAccount(t, { role: 'admin' });
    const viewer = await buildAccount(t, { role: 'viewer' });
    const withTotp = await buildAccount(t, { role: 'viewer' });
    await enrolTotp(t, withTotp);
    const offered = await buildAccount(t, { role: 'viewer', enrolPrompt: true });
    const clients = {
      anon: t.client(),
      setup: t.client(),
      admin: await signIn(t, admin),
      totp: await atTotpStep(t, withTotp),
      enrol: await atEnrolStep(t, offered),
    };
    await clients.anon.get('/login');
    const channel = await buildChannel(t, { createdBy: admin.id, url: 'https://hooks.example.com/nul' });
    const invitation = await mintInvitation(t.deps, { actorId: admin.id, role: 'viewer', base: 'http://localhost' });
    if (!invitation.ok) throw new Error('a viewer invitation needs no confirmation');
    const inviteToken = new URL(invitation.joinLink).searchParams.get('token')!;
    await clients.anon.get(`/invite?token=${inviteToken}`);
    return { clients, fixtures: { channelId: channel.id, viewerId: viewer.id, inviteToken } };
  }

  test('NUL in any field of any form, and in any query or path parameter of any page, is a 4xx without a failure', async () => {
    const { clients, fixtures } = await actors();
    const results = [];
    for (const [path, form] of Object.entries(FORMS)) {
      if (form.actor === 'setup') continue;
      const fields = form.fields(fixtures);
      for (const name of Object.keys(fields)) {
        const client = clients[form.actor];
        results.push(
          await check(`POST ${path}`, `POST ${path} ${name}`, () =>
            client.post(path, { ...fields, [name]: withNul(fields[name]!) }),
          ),
        );
      }
    }
    for (const [pattern, page] of Object.entries(PAGES)) {
      if (page.actor === 'setup') continue;
      for (const row of pageRows(pattern))
        results.push(await check(`GET ${pattern}`, `GET ${row}`, () => clients[page.actor].get(row)));
    }
    judge(results);
    assert.equal(
      (await t.deps.db.selectFrom('accounts').select('id').where('username', 'like', 'i%nvited-user').execute()).length,
      0,
    );
  });

  test('other control characters get the field message beside the field; a clean but malformed id is a stale one', async () => {
    const admin = await buildAccount(t, { role: 'admin' });
    const client = await signIn(t, admin);
    const provider = { display_name: 'Corp', slug: 'corp', issuer: 'https://idp.example.test', client_id: 'svc' };
    for (const bad of ['Corp\u001b[31m', 'Corp\r\nX-Injected: 1', 'Corp\u007f']) {
      const res = await client.post('/settings/sso', { ...provider, display_name: bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.ok(res.text.includes(CONTROL_CHARACTERS_MESSAGE), JSON.stringify(bad));
      assert.ok(!res.text.includes('X-Injected'), 'the refused value is not echoed');
    }
    assert.equal((await t.deps.db.selectFrom('sso_providers').select('id').execute()).length, 0);
    const stale = [
      ['/settings/channels/delete', { id: 'no such id!' }, '/settings?tab=channels&notice=gone'],
      ['/settings/sso/delete', { id: 'a b' }, '/settings?tab=sso&notice=deleted'],
      ['/profile/tokens/revoke', { token: 'a.b' }, '/profile?notice=token-revoked'],
      ['/profile/sessions/end', { session: '../x' }, '/profile?notice=session-ended'],
    ] as const;
    for (const [path, fields, location] of stale)
      assert.equal((await client.post(path, fields)).location, location, path);
  });
});

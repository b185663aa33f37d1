// Signing out with the provider, against the real OpenID Provider: a session remembers the provider that opened it;
// signing out of it with "Sign out at the provider too" on ends it and then sends the browser to the provider's
// end-session endpoint, which returns it to /login; removing a binding (or its provider) ends what it opened.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { InsertQueryNode, type KyselyPlugin } from 'kysely';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { codeNow, enrolTotp } from '../../../test/helpers/second-factor.ts';
import {
  bindIdentity,
  buildProvider,
  clearSsoState,
  newSub,
  pathOf,
  redirectUrisFor,
  roundTrip,
} from '../../../test/helpers/sso.ts';
import { makeCertificates, PUBLIC_CLIENT_ID, startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { changeProvider } from './sso.providers.service.ts';

/** Signs out at its end-session endpoint and puts `sid` in its id_tokens. */
let idp: TestIdp;
/** Names no end-session endpoint in its discovery. */
let plain: TestIdp;
/** Accepts connections under the test CA and never answers: a provider whose discovery hangs. */
let silent: { issuer: string; close(): Promise<void> };
before(async () => {
  const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-logout-')));
  const server = https.createServer({ key: fs.readFileSync(certs.keyFile), cert: fs.readFileSync(certs.certFile) });
  const sockets = new Set<Duplex>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  silent = {
    issuer: `https://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  idp = await startTestIdp({
    redirectUris: redirectUrisFor(['corp']),
    certs,
    logout: {
      postLogoutRedirectUris: ['http://localhost/login'],
      // Nothing listens there: the IdP's post fails, which it only logs. Registering it makes id_tokens carry `sid`.
      backchannelLogoutUri: 'http://127.0.0.1:9/login/sso/corp/backchannel-logout',
    },
  });
  plain = await startTestIdp({ redirectUris: redirectUrisFor(['plain']), certs, logout: { endSession: false } });
});
after(async () => {
  await idp.close();
  await plain.close();
  await silent.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: { id: string; username: string; password: string };
  let corp: { id: string; slug: string };
  let user: { id: string; username: string; password: string };
  let sub: string;

  beforeEach(async () => {
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
    admin = await buildAccount(t, { role: 'admin' });
    corp = await buildProvider(t, idp, { slug: 'corp', createdBy: admin.id, displayName: 'Corp IdP' });
    user = await buildAccount(t);
    sub = newSub();
    await bind(corp.id, sub, 'b-corp');
  });

  const bind = (providerId: string, boundSub: string, id: string) =>
    bindIdentity(t, { providerId, sub: boundSub, accountId: user.id, id });
  /** A browser signed in through `slug` (the IdP keeps that sign-in's session for endSession()). */
  const ssoClient = async (slug = 'corp', at = idp): Promise<TestClient> => {
    const client = t.client();
    const res = await roundTrip(client, at, `/login/sso/${slug}`, sub);
    assert.equal(res.status, 303, res.text.slice(0, 300));
    return client;
  };
  const signedIn = async (client: TestClient) => (await client.get('/')).status === 200;
  const rows = () =>
    t.deps.db
      .selectFrom('sessions')
      .select(['id_hash', 'stage', 'sso_provider_id', 'sso_sub', 'sso_sid', 'sso_id_token'])
      .orderBy('created_at')
      .execute();
  const signOutAtProvider = (id: string) =>
    t.deps.db.updateTable('sso_providers').set({ sign_out_at_provider: 1 }).where('id', '=', id).execute();
  const adminClient = async () => {
    const client = await signIn(t, admin);
    await client.get('/settings?tab=sso');
    return client;
  };

  test('a session opened through a provider keeps its provider, sub, sid and id_token, also past the second factor; a password session keeps none', async () => {
    await ssoClient();
    const [opened] = await rows();
    assert.equal(opened?.sso_provider_id, corp.id);
    assert.equal(opened?.sso_sub, sub);
    assert.match(opened?.sso_sid ?? '', /.+/);
    assert.match(opened?.sso_id_token ?? '', /^eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+$/);
    await t.deps.db.deleteFrom('sessions').execute();

    await signIn(t, user);
    const [password] = await rows();
    assert.deepEqual(
      [password?.sso_provider_id, password?.sso_sub, password?.sso_sid, password?.sso_id_token],
      [null, null, null, null],
    );
    await t.deps.db.deleteFrom('sessions').execute();

    const { secret } = await enrolTotp(t, user);
    const pending = await ssoClient();
    const [owing] = await rows();
    assert.equal(owing?.stage, 'totp');
    await pending.get('/login/totp');
    const done = await pending.post('/login/totp', { code: codeNow(t, secret) });
    assert.equal(done.location, '/');
    const [promoted] = await rows();
    assert.equal(promoted?.stage, 'full');
    assert.notEqual(promoted?.id_hash, owing?.id_hash, 'a new id after the second factor');
    assert.deepEqual(
      [promoted?.sso_provider_id, promoted?.sso_sub, promoted?.sso_sid, promoted?.sso_id_token],
      [owing?.sso_provider_id, owing?.sso_sub, owing?.sso_sid, owing?.sso_id_token],
    );
  });

  test('"Sign out at the provider too": signing out ends the session first, then sends the browser to the end-session endpoint, which returns it to /login', async () => {
    await signOutAtProvider(corp.id);
    const client = await ssoClient();
    const [opened] = await rows();
    const idToken = opened!.sso_id_token!;
    await client.get('/');

    const out = await client.post('/logout');
    assert.equal(out.status, 200);
    assert.equal(out.headers.get('refresh'), '0; url=/login/sso/corp/sign-out');
    assert.match(out.text, /You are signed out of svc/);
    assert.match(out.text, /continue to sign out at Corp IdP/);
    assert.ok(!out.text.includes(idToken), 'the id_token is never in a page');
    assert.doesNotMatch(out.text, /Sign out<\/button>/, 'the page is drawn for nobody signed in');
    assert.equal((await rows()).length, 0, 'the svc session ended before the browser left');
    const cookie = out.headers.getSetCookie().find((l) => l.startsWith('svc_sso_sign_out='));
    assert.match(cookie ?? '', /HttpOnly/);
    assert.match(cookie ?? '', /SameSite=Lax/);

    const onward = await client.get('/login/sso/corp/sign-out');
    assert.equal(onward.status, 303);
    const end = new URL(onward.location!);
    assert.equal(`${end.origin}${end.pathname}`, `${idp.issuer}/session/end`);
    assert.equal(end.searchParams.get('id_token_hint'), idToken);
    assert.equal(end.searchParams.get('client_id'), PUBLIC_CLIENT_ID);
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), 'http://localhost/login');
    assert.match(end.searchParams.get('state') ?? '', /^[\w-]{22}$/);
    assert.equal((await client.get('/login/sso/corp/sign-out')).location, '/login?notice=signed-out', 'taken once');

    const back = await idp.endSession(end.href);
    assert.equal(`${back.origin}${back.pathname}`, 'http://localhost/login');
    assert.equal(back.searchParams.get('state'), end.searchParams.get('state'));
    const login = await client.get(pathOf(back));
    assert.equal(login.status, 200);
    assert.match(login.text, /You are signed out\./);
    assert.ok(!t.logs.some((l) => l.includes(idToken)), 'nor in a log line');
    assert.equal(
      await t.deps.db
        .selectFrom('sso_sign_outs')
        .selectAll()
        .execute()
        .then((r) => r.length),
      0,
    );
  });

  test('signing out stays local with the setting off, for a password session, and for a disabled provider', async () => {
    const local = async (client: TestClient) => {
      await client.get('/');
      const out = await client.post('/logout');
      assert.equal(out.status, 303);
      assert.equal(out.location, '/login?notice=signed-out');
      assert.ok(!out.headers.getSetCookie().some((l) => l.startsWith('svc_sso_sign_out=')));
    };
    await local(await ssoClient());
    await signOutAtProvider(corp.id);
    await local(await signIn(t, user));
    const sso = await ssoClient();
    await t.deps.db.updateTable('sso_providers').set({ enabled: 0 }).where('id', '=', corp.id).execute();
    await local(sso);
  });

  test('a provider whose discovery names no end-session endpoint: sign-out stays local and its Settings row says so', async () => {
    const other = await buildProvider(t, plain, { slug: 'plain', createdBy: admin.id, displayName: 'Plain IdP' });
    await bind(other.id, sub, 'b-plain');
    await signOutAtProvider(other.id);
    await signOutAtProvider(corp.id);
    const client = await ssoClient('plain', plain);
    await client.get('/');
    const out = await client.post('/logout');
    assert.equal(out.location, '/login?notice=signed-out');
    assert.equal((await rows()).length, 0);

    const tab = await (await adminClient()).get('/settings?tab=sso');
    const row = (slug: string) => tab.text.slice(tab.text.indexOf(`id="provider-${slug}"`)).split('</article>')[0]!;
    assert.match(row('plain'), /discovery names no end-session endpoint: signing out stays local to svc/);
    assert.match(row('corp'), new RegExp(`the browser is sent to ${idp.issuer}/session/end`));
  });

  test('a provider whose discovery does not answer: signing out does not wait for it and stays local, and its Settings row says it has not answered yet', async () => {
    await signOutAtProvider(corp.id);
    const client = await ssoClient();
    await client.get('/');
    // The provider now names an address that accepts connections and never answers. Written directly: a save through
    // the Settings form would end the session (its issuer changed).
    await t.deps.db.updateTable('sso_providers').set({ issuer: silent.issuer }).where('id', '=', corp.id).execute();
    const out = await client.post('/logout');
    assert.equal(out.status, 303);
    assert.equal(out.location, '/login?notice=signed-out');
    assert.ok(!out.headers.getSetCookie().some((l) => l.startsWith('svc_sso_sign_out=')));
    assert.equal((await rows()).length, 0, 'the session ended');
    assert.ok(t.logs.some((l) => l.includes('its discovery did not answer in time, so the sign-out stayed local')));

    const tab = await (await adminClient()).get('/settings?tab=sso');
    assert.equal(tab.status, 200);
    const row = tab.text.slice(tab.text.indexOf('id="provider-corp"')).split('</article>')[0]!;
    assert.match(row, /the provider’s discovery has not answered yet, so for now signing out stays local to svc/);
  });

  test('the Settings row shows what to register for both logouts, and the form turns "Sign out at the provider too" on and off', async () => {
    const client = await adminClient();
    const tab = await client.get('/settings?tab=sso');
    assert.match(tab.text, /http:\/\/localhost\/login\/sso\/corp\/backchannel-logout/);
    assert.match(tab.text, /Post-logout redirect URL<\/dt><dd><code>http:\/\/localhost\/login<\/code>/);
    assert.match(tab.text, /Off: signing out of svc leaves the session at the provider as it is/);
    const form = {
      id: corp.id,
      display_name: 'Corp IdP',
      slug: 'corp',
      issuer: idp.issuer,
      client_id: PUBLIC_CLIENT_ID,
    };
    const saved = await client.post('/settings/sso/update', { ...form, enabled: 'on', sign_out_at_provider: 'on' });
    assert.equal(saved.location, '/settings?tab=sso&notice=updated');
    const provider = () =>
      t.deps.db.selectFrom('sso_providers').selectAll().where('id', '=', corp.id).executeTakeFirstOrThrow();
    assert.equal((await provider()).sign_out_at_provider, 1);
    assert.match((await client.get('/settings?tab=sso')).text, /On: after signing out of svc, the browser is sent to/);
    await client.post('/settings/sso/update', { ...form, enabled: 'on' });
    assert.equal((await provider()).sign_out_at_provider, 0);
  });

  test('removing a binding ends the sessions it opened: unlink (the unlinking session too, when it came through it), an admin’s removal, an issuer change, deleting the provider', async () => {
    const a = await ssoClient();
    const b = await ssoClient();
    const password = await signIn(t, user);
    await a.get('/profile');
    const unlinked = await a.post('/profile/sso/unlink', { id: 'b-corp' });
    assert.equal(unlinked.location, '/login?notice=unlinked');
    assert.match(unlinked.headers.get('set-cookie') ?? '', /Max-Age=0/i, 'the ended session’s cookie is cleared');
    assert.equal(await signedIn(a), false, 'the session that unlinked came through the identity, so it ended too');
    assert.equal(await signedIn(b), false, 'another session the identity opened ended');
    assert.equal(await signedIn(password), true);
    const login = await a.get('/login?notice=unlinked');
    assert.match(login.text, /Identity unlinked\. You had signed in through it/);

    // A password session unlinking stays signed in and is told on its Profile.
    await bind(corp.id, sub, 'b-corp-1');
    const opened = await ssoClient();
    await password.get('/profile');
    const fromPassword = await password.post('/profile/sso/unlink', { id: 'b-corp-1' });
    assert.equal(fromPassword.location, '/profile?sso=unlinked#profile-sso');
    assert.equal(await signedIn(password), true);
    assert.equal(await signedIn(opened), false);

    await bind(corp.id, sub, 'b-corp-2');
    const a2 = await ssoClient();
    const c = await ssoClient();
    const boss = await adminClient();
    assert.equal((await boss.post('/settings/sso/identity/remove', { id: 'b-corp-2' })).status, 303);
    assert.equal(await signedIn(c), false);
    assert.equal(await signedIn(a2), false, 'every session opened through it');
    assert.equal(await signedIn(password), true);

    await bind(corp.id, sub, 'b-corp-3');
    const d = await ssoClient();
    const changed = await changeProvider(t.deps, { actorId: admin.id }, { id: corp.id, issuer: plain.issuer });
    assert.ok(changed.ok && changed.issuerChanged);
    assert.equal(await signedIn(d), false, 'a new issuer drops the bindings and what they opened');
    await changeProvider(t.deps, { actorId: admin.id }, { id: corp.id, issuer: idp.issuer });

    await bind(corp.id, sub, 'b-corp-4');
    const e = await ssoClient();
    await boss.get('/settings?tab=sso');
    assert.equal((await boss.post('/settings/sso/delete', { id: corp.id, confirm: 'yes' })).status, 303);
    assert.equal(await signedIn(e), false);
    assert.equal(await signedIn(password), true, 'password sign-in keeps working');
    assert.equal(await signedIn(boss), true);
  });

  test('disabling a provider, or changing its client id, ends the sessions it opened in the same save; password sessions and API tokens stay', async () => {
    const { token } = await createToken(t.deps, user.id, { name: 'ci', expiry: '90' });
    const a = await ssoClient();
    const b = await ssoClient();
    const password = await signIn(t, user);
    const boss = await adminClient();
    const tab = await boss.get('/settings?tab=sso');
    assert.match(tab.text, /Disabling ends the sessions it opened/);

    const form = {
      id: corp.id,
      display_name: 'Corp IdP',
      slug: 'corp',
      issuer: idp.issuer,
      client_id: PUBLIC_CLIENT_ID,
    };
    const saved = await boss.post('/settings/sso/update', form);
    assert.equal(saved.location, '/settings?tab=sso&notice=updated&ended=2');
    assert.match((await boss.get(saved.location!)).text, /Provider saved\. 2 sessions signed in through it ended\./);
    assert.equal(await signedIn(a), false, 'a session the disabled provider opened ended');
    assert.equal(await signedIn(b), false);
    assert.equal(await signedIn(password), true, 'a password session of the same account stays');
    assert.equal(await signedIn(boss), true);
    assert.equal((await t.client().get('/api/me', { authorization: `Bearer ${token}` })).status, 200, 'and its token');
    assert.ok(
      t.logs.some((l) => l.includes('"event":"sso-provider-sessions-ended"') && l.includes('"endedSessions":2')),
    );

    const again = await boss.post('/settings/sso/update', { ...form, enabled: 'on' });
    assert.equal(again.location, '/settings?tab=sso&notice=updated', 'enabling again ends nothing');
    const c = await ssoClient();
    const { token: adminToken } = await createToken(t.deps, admin.id, { name: 'ci', expiry: '90' });
    const patched = await t.app.request(`http://localhost/api/sso/providers/${corp.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'svc-renamed', skip_discovery: true }),
    });
    assert.equal(patched.status, 200);
    assert.equal(await signedIn(c), false, 'a new client id ends what the old one opened');
    assert.equal(await signedIn(password), true);
    const d = t.client();
    await t.deps.db
      .updateTable('sso_providers')
      .set({ client_id: PUBLIC_CLIENT_ID })
      .where('id', '=', corp.id)
      .execute();
    assert.equal((await roundTrip(d, idp, '/login/sso/corp', sub)).status, 303);
    const renamed = await changeProvider(t.deps, { actorId: admin.id }, { id: corp.id, display_name: 'Corp' });
    assert.ok(renamed.ok && renamed.endedSessions === 0, 'another change ends nothing');
    assert.equal(await signedIn(d), true);
  });

  test('signing out ends the session first: when preparing the sign-out at the provider fails, the session is still gone and the browser lands on /login', async () => {
    await signOutAtProvider(corp.id);
    // The database refuses to keep the end-session URL, as during an outage.
    const refuseSignOuts: KyselyPlugin = {
      transformQuery({ node }) {
        if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'sso_sign_outs')
          throw new Error('database unavailable');
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    t = buildTestApp({ ...getDb(), db: getDb().db.withPlugin(refuseSignOuts) }, { oidcCaFile: idp.caFile });
    const client = await ssoClient();
    await client.get('/');
    const out = await client.post('/logout');
    assert.equal(out.status, 303);
    assert.equal(out.location, '/login?notice=signed-out');
    assert.equal((await rows()).length, 0, 'the session ended');
    assert.equal(await signedIn(client), false);
    assert.ok(t.logs.some((l) => l.includes('could not be prepared, so it stayed local')));
    assert.ok(!t.logs.some((l) => /eyJ[\w-]+\.eyJ/.test(l)), 'no token in a log line');
  });

  test('the Profile session list says which sessions came through which provider', async () => {
    await ssoClient();
    const password = await signIn(t, user);
    const profile = await password.get('/profile');
    // Each row up to its own end: the last one's chunk would otherwise run on through the rest of the page.
    const rowsOf = profile.text
      .split('<tr>')
      .map((r) => r.split('</tr>')[0]!)
      .filter((r) => r.includes('End '));
    assert.equal(rowsOf.length, 2);
    assert.equal(rowsOf.filter((r) => r.includes('via Corp IdP')).length, 1);
    assert.ok(rowsOf.find((r) => r.includes('this session'))?.includes('via') === false);
  });

  test('the API shows and changes "Sign out at the provider too" and the URLs to register', async () => {
    const { token } = await createToken(t.deps, admin.id, { name: 'ci', expiry: '90' });
    const api = (method: string, body?: unknown) =>
      t.app.request(`http://localhost/api/sso/providers/${corp.id}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const read = await (await api('GET')).json();
    assert.equal(read.sign_out_at_provider, false);
    assert.deepEqual(read.logout_urls, {
      post_logout_redirect: 'http://localhost/login',
      backchannel: 'http://localhost/login/sso/corp/backchannel-logout',
    });
    const changed = await api('PATCH', { sign_out_at_provider: true });
    assert.equal(changed.status, 200);
    assert.equal((await changed.json()).sign_out_at_provider, true);
  });
});

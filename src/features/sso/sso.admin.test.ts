import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { clearSsoState } from '../../../test/helpers/sso.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { closedPort } from '../../../test/helpers/ports.ts';
import {
  makeCertificates,
  PUBLIC_CLIENT_ID,
  serveDocument,
  startTestIdp,
  type TestIdp,
} from '../../../test/helpers/test-idp.ts';
import { createSession } from '../auth/sessions.service.ts';

// One CA, one real IdP and one bare document server for the discovery checks of every dialect.
const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-admin-ca-')));
let idp: TestIdp;
let doc: Awaited<ReturnType<typeof serveDocument>>;
before(async () => {
  idp = await startTestIdp({ redirectUris: ['http://localhost/login/sso/corp/callback'], certs });
  doc = await serveDocument(certs);
});
after(async () => {
  await idp.close();
  await doc.close();
});

const SECRET = 'super-secret-client-value-1234';

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: { id: string; username: string; password: string };
  let c: TestClient;

  beforeEach(async () => {
    const db = getDb().db;
    await clearSsoState(db);
    t = buildTestApp(getDb());
    admin = await buildAccount(t, { role: 'admin' });
    c = await signIn(t, admin);
    await c.get('/settings?tab=sso');
  });

  // Saved without the discovery check (idp.example.com does not exist): the checks have their own tests below.
  const declare = (fields: Record<string, string> = {}) =>
    c.post('/settings/sso', {
      display_name: 'Corp IdP',
      slug: 'corp',
      issuer: 'https://idp.example.com',
      client_id: 'svc',
      save_anyway: 'on',
      ...fields,
    });
  const provider = (slug = 'corp') =>
    t.deps.db.selectFrom('sso_providers').selectAll().where('slug', '=', slug).executeTakeFirstOrThrow();

  test('declaring a provider: enabled, secret stored but shown only as a badge, both callback URLs listed', async () => {
    const res = await declare({ client_secret: SECRET });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/settings?tab=sso&notice=created-unchecked');
    const row = await provider();
    assert.equal(row.enabled, 1);
    assert.equal(row.client_secret, SECRET);
    assert.equal(row.created_by, admin.id);
    const page = await c.get(res.location!);
    assert.equal(page.status, 200);
    assert.match(page.text, /Declared without checking discovery/);
    for (const key of ['constructor', '__proto__', 'toString', 'nonsense']) {
      const odd = await c.get(`/settings?tab=sso&notice=${key}`);
      assert.equal(odd.status, 200, key);
      assert.doesNotMatch(odd.text, /class="notice success"/, key);
    }
    assert.match(page.text, /secret: set/);
    assert.ok(!page.text.includes(SECRET), 'the secret never appears in a page');
    assert.ok(page.text.includes('http://localhost/login/sso/corp/callback'));
    assert.ok(page.text.includes('http://localhost/profile/sso/corp/link/callback'));
    assert.ok(!t.logs.some((l) => l.includes(SECRET)), 'the secret never appears in a log line');
  });

  test('callback URLs use SVC_EXTERNAL_URL and ignore X-Forwarded-Host', async () => {
    await declare();
    const external = buildTestApp(getDb(), { externalUrl: 'https://svc.example.org' });
    // Forms from http://localhost would fail the Origin check against the external URL: seat a session directly.
    const ec = external.client();
    ec.cookies.set('svc_session', await createSession(external.deps, admin.id, 'full', 'test'));
    const page = await ec.get('/settings?tab=sso', {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    assert.ok(page.text.includes('https://svc.example.org/login/sso/corp/callback'));
    assert.ok(!page.text.includes('evil.example'));
    const local = await c.get('/settings?tab=sso', { 'x-forwarded-host': 'evil.example' });
    assert.ok(local.text.includes('http://localhost/profile/sso/corp/link/callback'));
    assert.ok(!local.text.includes('evil.example'));
  });

  test('a public client has no secret: badge none', async () => {
    await declare();
    assert.equal((await provider()).client_secret, null);
    assert.match((await c.get('/settings?tab=sso')).text, /secret: none/);
  });

  test('validation: non-https issuer, bad slugs and blanks are refused beside the field, nothing stored', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ issuer: 'http://idp.example.com' }, /issuer URL must use https/],
      [{ issuer: 'ftp://idp.example.com' }, /issuer URL must use https/],
      [{ issuer: 'idp.example.com' }, /absolute URL/],
      [{ issuer: 'https://user:pw@idp.example.com' }, /cannot carry a user name/],
      [{ issuer: 'https://idp.example.com/.well-known/openid-configuration' }, /not its discovery document/],
      [{ issuer: 'https://idp.example.com/realms/x/.well-known/openid-configuration' }, /not its discovery document/],
      [{ issuer: 'https://idp.example.com/.WELL-KNOWN/oauth-authorization-server' }, /not its discovery document/],
      [{ issuer: 'https://idp.example.com/.well-known' }, /not its discovery document/],
      [{ slug: 'Corp' }, /lowercase letters, digits and hyphens/],
      [{ slug: '-corp' }, /lowercase letters, digits and hyphens/],
      [{ slug: 'corp-' }, /lowercase letters, digits and hyphens/],
      [{ slug: 'co--rp' }, /lowercase letters, digits and hyphens/],
      [{ slug: 'co rp' }, /lowercase letters, digits and hyphens/],
      [{ slug: '' }, /Enter the slug/],
      [{ display_name: '  ' }, /Enter the display name/],
      [{ client_id: '' }, /Enter the client ID/],
    ];
    for (const [fields, message] of cases) {
      const res = await declare({ ...fields, client_secret: SECRET });
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.match(res.text, message, JSON.stringify(fields));
      assert.ok(!res.text.includes(SECRET), 'a refused form does not echo the secret');
    }
    assert.equal((await t.deps.db.selectFrom('sso_providers').select('id').execute()).length, 0);
    assert.equal((await declare({ slug: 'a1-b2-c3' })).status, 303);
  });

  test('a duplicate slug is a plain message on create and on update', async () => {
    await declare();
    const dup = await declare({ display_name: 'Other' });
    assert.equal(dup.status, 409);
    assert.match(dup.text, /Another provider already uses this slug/);
    assert.doesNotMatch(dup.text, /constraint|UNIQUE|duplicate key/i);
    await declare({ slug: 'other' });
    const other = await provider('other');
    const upd = await c.post('/settings/sso/update', {
      id: other.id,
      display_name: 'Other',
      slug: 'corp',
      issuer: 'https://idp.example.com',
      client_id: 'svc',
      enabled: 'on',
      save_anyway: 'on',
    });
    assert.equal(upd.status, 409);
    assert.match(upd.text, /Another provider already uses this slug/);
    assert.equal((await provider('other')).display_name, other.display_name);
  });

  test('update changes fields and the enabled flag; the login page shows only enabled providers', async () => {
    await declare();
    const row = await provider();
    const anon = t.client();
    assert.match((await anon.get('/login')).text, /Sign in with Corp IdP/);
    const res = await c.post('/settings/sso/update', {
      id: row.id,
      display_name: 'Corporate',
      slug: 'corporate',
      issuer: 'https://login.example.com/realm',
      client_id: 'svc-2',
    });
    assert.equal(res.status, 303);
    const after = await provider('corporate');
    assert.deepEqual(
      [after.display_name, after.issuer, after.client_id, after.enabled],
      ['Corporate', 'https://login.example.com/realm', 'svc-2', 0],
    );
    assert.doesNotMatch((await anon.get('/login')).text, /href="\/login\/sso\//, 'no provider’s button');
    await c.post('/settings/sso/update', {
      id: row.id,
      display_name: 'Corporate',
      slug: 'corporate',
      issuer: 'https://login.example.com/realm',
      client_id: 'svc-2',
      enabled: 'on',
      save_anyway: 'on',
    });
    const login = await anon.get('/login');
    assert.match(login.text, /href="\/login\/sso\/corporate"/);
    const invalid = await c.post('/settings/sso/update', {
      id: row.id,
      display_name: 'Corporate',
      slug: 'corporate',
      issuer: 'http://login.example.com',
      client_id: 'svc-2',
    });
    assert.equal(invalid.status, 400);
    assert.match(invalid.text, /must use https/);
    const wellKnown = await c.post('/settings/sso/update', {
      id: row.id,
      display_name: 'Corporate',
      slug: 'corporate',
      issuer: 'https://login.example.com/realm/.well-known/openid-configuration',
      client_id: 'svc-2',
    });
    assert.equal(wellKnown.status, 400);
    assert.match(wellKnown.text, /not its discovery document/);
    assert.equal((await provider('corporate')).issuer, 'https://login.example.com/realm');
    assert.equal(
      (
        await c.post('/settings/sso/update', {
          id: 'gone',
          display_name: 'x',
          slug: 'x',
          issuer: 'https://x.example',
          client_id: 'x',
        })
      ).status,
      404,
    );
  });

  test('secret: a typed value sets it, blank keeps it, clear removes it and wins over a typed value', async () => {
    await declare();
    const { id } = await provider();
    const set = await c.post('/settings/sso/secret', { id, client_secret: SECRET });
    assert.equal(set.location, '/settings?tab=sso&notice=secret-set');
    assert.equal((await provider()).client_secret, SECRET);
    const keep = await c.post('/settings/sso/secret', { id, client_secret: '' });
    assert.equal(keep.location, '/settings?tab=sso&notice=secret-kept');
    assert.equal((await provider()).client_secret, SECRET);
    const clear = await c.post('/settings/sso/secret', { id, client_secret: 'typed-but-cleared', clear_secret: 'on' });
    assert.equal(clear.location, '/settings?tab=sso&notice=secret-cleared');
    assert.equal((await provider()).client_secret, null);
    const page = await c.get('/settings?tab=sso');
    assert.match(page.text, /secret: none/);
    assert.ok(!page.text.includes('typed-but-cleared'));
  });

  test('deleting a provider asks first, saying how many identities go; then deletes its bindings and keeps the accounts; twice is a no-op', async () => {
    await declare();
    const { id } = await provider();
    const user = await buildAccount(t);
    const other = await buildAccount(t);
    for (const [bid, sub, account] of [
      ['b1', 's1', user.id],
      ['b0', 's0', other.id],
    ] as const) {
      await t.deps.db
        .insertInto('sso_identities')
        .values({ id: bid, provider_id: id, sub, account_id: account, label: `${sub}@example.com`, linked_at: 1 })
        .execute();
    }
    const panel = await c.get('/settings?tab=sso');
    assert.match(panel.text, /Delete Corp IdP and its linked identities…/, 'the panel button leads to a confirmation');
    const asked = await c.post('/settings/sso/delete', { id });
    assert.equal(asked.status, 200, 'the first step only asks');
    assert.match(asked.text, /<h2>Delete the provider Corp IdP\?<\/h2>/);
    assert.match(asked.text, /2 linked identities are deleted with it/);
    assert.match(asked.text, /This cannot be undone/);
    assert.match(asked.text, /name="confirm" value="yes"/);
    assert.match(asked.text, /<a href="\/settings\?tab=sso#provider-corp">Cancel<\/a>/);
    assert.match(asked.text, /<nav class="tabs" aria-label="Settings">/, 'in the tab bar');
    assert.equal((await c.post('/settings/sso/delete', { id, confirm: 'no' })).status, 200, 'only "yes" confirms');
    assert.equal(
      (await t.deps.db.selectFrom('sso_identities').select('id').execute()).length,
      2,
      'nothing deleted before the confirmation',
    );
    assert.ok(await t.deps.db.selectFrom('sso_providers').select('id').where('id', '=', id).executeTakeFirst());

    await t.deps.db.deleteFrom('sso_identities').where('id', '=', 'b0').execute();
    assert.match(
      (await c.post('/settings/sso/delete', { id })).text,
      /1 linked identity is deleted with it: that person can no longer sign in with Corp IdP/,
    );
    assert.equal(
      (await c.post('/settings/sso/delete', { id, confirm: 'yes' })).location,
      '/settings?tab=sso&notice=deleted',
    );
    assert.equal((await t.deps.db.selectFrom('sso_identities').select('id').execute()).length, 0);
    assert.ok(await t.deps.db.selectFrom('accounts').select('id').where('id', '=', user.id).executeTakeFirst());
    assert.equal((await c.post('/settings/sso/delete', { id, confirm: 'yes' })).status, 303);
    const gone = await c.post('/settings/sso/delete', { id });
    assert.equal(gone.location, '/settings?tab=sso&notice=gone', 'nothing to confirm once gone');
    assert.match(
      (await c.get(gone.location!)).text,
      /<div class="notice info" role="status">That provider no longer exists\.<\/div>/,
    );
  });

  test('linked identities are listed and removable by an admin; idempotent; the account stays', async () => {
    await declare();
    const { id } = await provider();
    const user = await buildAccount(t, { username: 'carol' });
    await t.deps.db
      .insertInto('sso_identities')
      .values({
        id: 'b2',
        provider_id: id,
        sub: 's2',
        account_id: user.id,
        label: 'carol@corp.example',
        linked_at: t.clock.now(),
      })
      .execute();
    const page = await c.get('/settings?tab=sso');
    assert.match(page.text, /carol@corp\.example/);
    assert.match(page.text, /<td>carol<\/td>/);
    assert.match(page.text, /2026-01-15 12:00 UTC/);
    assert.equal(
      (await c.post('/settings/sso/identity/remove', { id: 'b2' })).location,
      '/settings?tab=sso&notice=identity-removed',
    );
    assert.equal((await t.deps.db.selectFrom('sso_identities').select('id').execute()).length, 0);
    assert.equal((await c.post('/settings/sso/identity/remove', { id: 'b2' })).status, 303);
    assert.equal((await c.post('/settings/sso/identity/remove', {})).status, 303);
    assert.ok(await t.deps.db.selectFrom('accounts').select('id').where('id', '=', user.id).executeTakeFirst());
  });

  test('a viewer gets 403 on every SSO admin route and changes nothing', async () => {
    await declare();
    const { id } = await provider();
    const viewer = await buildAccount(t, { role: 'viewer' });
    const v = await signIn(t, viewer);
    assert.equal((await v.get('/settings?tab=sso')).status, 403);
    const posts: [string, Record<string, string>][] = [
      ['/settings/sso', { display_name: 'X', slug: 'x', issuer: 'https://x.example', client_id: 'x' }],
      ['/settings/sso/update', { id, display_name: 'X', slug: 'x', issuer: 'https://x.example', client_id: 'x' }],
      ['/settings/sso/secret', { id, clear_secret: 'on' }],
      ['/settings/sso/delete', { id }],
      ['/settings/sso/delete', { id, confirm: 'yes' }],
      ['/settings/sso/identity/remove', { id: 'any' }],
    ];
    for (const [path, fields] of posts) assert.equal((await v.post(path, fields)).status, 403, path);
    const rows = await t.deps.db.selectFrom('sso_providers').select(['slug', 'enabled']).execute();
    assert.deepEqual(rows, [{ slug: 'corp', enabled: 1 }]);
  });

  test('the author of a provider cannot be removed from the database (created_by has no cascade)', async () => {
    const other = await buildAccount(t, { role: 'admin' });
    const o = await signIn(t, other);
    await o.get('/settings?tab=sso');
    await o.post('/settings/sso', {
      display_name: 'Corp',
      slug: 'corp',
      issuer: 'https://idp.example.com',
      client_id: 'svc',
      save_anyway: 'on',
    });
    await assert.rejects(t.deps.db.deleteFrom('accounts').where('id', '=', other.id).execute());
  });

  test('a failed submit keeps the tab bar and shows an error summary linking to each field', async () => {
    const res = await declare({ slug: 'Bad Slug', client_id: '' });
    assert.equal(res.status, 400);
    assert.match(res.text, /<nav class="tabs" aria-label="Settings">/);
    assert.match(res.text, /<a href="\/settings\?tab=sso" aria-current="page">Single sign-on<\/a>/);
    assert.match(
      res.text,
      /<div class="error-summary" role="alert"[^>]*><h2 id="sso-create-summary">There are 2 problems<\/h2>/,
    );
    assert.match(res.text, /<a href="#sso-create-slug">/);
    assert.match(res.text, /<a href="#sso-create-client_id">Enter the client ID\.<\/a>/);
    assert.match(
      res.text,
      /<input id="sso-create-slug" name="slug" type="text" value="Bad Slug" required="" maxlength="64" aria-invalid="true" aria-describedby="sso-create-slug-hint sso-create-slug-error"\/>/,
    );
  });

  /** An admin client on an app that trusts the test CA (as SVC_OIDC_CA_FILE does). */
  async function withCa() {
    const app = buildTestApp(getDb(), { oidcCaFile: certs.caFile });
    const client = await signIn(app, admin);
    await client.get('/settings?tab=sso');
    return client;
  }

  test('declaring runs discovery: a reachable provider is saved at once; each failure is said in plain words', async () => {
    const ca = await withCa();
    const form = (fields: Record<string, string>) =>
      ca.post('/settings/sso', {
        display_name: 'Corp IdP',
        slug: 'corp',
        issuer: idp.issuer,
        client_id: PUBLIC_CLIENT_ID,
        ...fields,
      });
    const port = await closedPort();
    doc.document.body = 'not a document';
    const failures: [Record<string, string>, RegExp, typeof c][] = [
      [
        { issuer: `https://127.0.0.1:${port}` },
        new RegExp(`svc could not reach https://127\\.0\\.0\\.1:${port}: the host is unknown, refused the connection`),
        ca,
      ],
      [{ issuer: doc.url }, /is not a usable discovery document/, ca],
      [{ issuer: `${idp.issuer}/elsewhere` }, /is not a usable discovery document/, ca],
      [{}, /does not trust its certificate\. For a provider behind a private CA, set SVC_OIDC_CA_FILE/, c],
    ];
    for (const [fields, message, client] of failures) {
      const res = await (client === c
        ? declare({ issuer: idp.issuer, client_id: PUBLIC_CLIENT_ID, save_anyway: '', ...fields })
        : form(fields));
      assert.equal(res.status, 422, JSON.stringify(fields));
      assert.match(res.text.replace(/&#39;/g, "'"), message, JSON.stringify(fields));
      assert.match(
        res.text,
        /<label for="sso-create-save_anyway">Save anyway: the provider is not reachable from here yet<\/label>/,
      );
      assert.match(res.text, /<nav class="tabs" aria-label="Settings">/, 'the tab bar stays');
    }
    doc.document.body = {
      issuer: 'https://someone-else.example',
      authorization_endpoint: `${doc.url}/a`,
      token_endpoint: `${doc.url}/t`,
      jwks_uri: `${doc.url}/k`,
    };
    assert.match((await form({ issuer: doc.url })).text, /names a different issuer/);
    doc.document.body = {
      issuer: doc.url,
      authorization_endpoint: 'http://idp.example/a',
      token_endpoint: `${doc.url}/t`,
      jwks_uri: `${doc.url}/k`,
    };
    assert.match((await form({ issuer: doc.url })).text, /lists endpoints that are not https/);
    assert.equal((await t.deps.db.selectFrom('sso_providers').select('id').execute()).length, 0, 'nothing saved');

    const ok = await form({});
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/settings?tab=sso&notice=created');
  });

  test('"Save anyway" saves a provider that cannot be reached yet, with a notice saying so', async () => {
    const port = await closedPort();
    const res = await c.post('/settings/sso', {
      display_name: 'Later',
      slug: 'later',
      issuer: `https://127.0.0.1:${port}`,
      client_id: 'svc',
      save_anyway: 'on',
    });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/settings?tab=sso&notice=created-unchecked');
    assert.equal((await provider('later')).issuer, `https://127.0.0.1:${port}`);
  });

  test('changing an enabled provider runs discovery too; a disabled one is saved without it', async () => {
    const ca = await withCa();
    await declare({ issuer: idp.issuer, client_id: PUBLIC_CLIENT_ID });
    const { id } = await provider();
    const port = await closedPort();
    const change = (fields: Record<string, string>) =>
      ca.post('/settings/sso/update', {
        id,
        display_name: 'Corp IdP',
        slug: 'corp',
        issuer: `https://127.0.0.1:${port}`,
        client_id: PUBLIC_CLIENT_ID,
        ...fields,
      });
    const refused = await change({ enabled: 'on' });
    assert.equal(refused.status, 422);
    assert.match(refused.text, /svc could not reach/);
    assert.match(refused.text, /<details open="">/, 'the provider panel stays open');
    assert.match(refused.text, new RegExp(`<label for="sso-update-${id}-save_anyway">Save anyway`));
    assert.equal((await provider()).issuer, idp.issuer, 'nothing saved');
    assert.equal((await change({})).status, 303, 'disabled: saved without discovery');
    assert.equal(
      (await change({ enabled: 'on', save_anyway: 'on' })).location,
      '/settings?tab=sso&notice=updated-unchecked',
    );
    assert.equal(
      (
        await ca.post('/settings/sso/update', {
          id,
          display_name: 'Corp IdP',
          slug: 'corp',
          issuer: idp.issuer,
          client_id: PUBLIC_CLIENT_ID,
          enabled: 'on',
        })
      ).status,
      303,
    );
  });
  test('a refused declaration asks for the client secret again; "Save anyway" alone never saves it as a public client', async () => {
    const port = await closedPort();
    const fields = { display_name: 'Okta', slug: 'okta', issuer: `https://127.0.0.1:${port}`, client_id: 'svc' };
    const refused = await c.post('/settings/sso', { ...fields, client_secret: SECRET });
    assert.equal(refused.status, 422);
    const again =
      /The client secret was not kept because the form was refused\. Enter it again, or tick &quot;No secret: a public client \(PKCE only\)&quot;\./;
    assert.match(refused.text, again, 'said at the field');
    assert.match(refused.text, /<p class="error" id="sso-create-client_secret-error">The client secret was not kept/);
    assert.match(refused.text, /<input type="hidden" name="secret_retry" value="1"\/>/);
    assert.match(refused.text, /<label for="sso-create-secret_skip">No secret: a public client \(PKCE only\)<\/label>/);
    assert.ok(!refused.text.includes(SECRET), 'the secret is not echoed');

    // The reported path: tick "Save anyway" and submit with the secret field blank, as the browser re-shows it.
    const blank = await c.post('/settings/sso', { ...fields, save_anyway: 'on', secret_retry: '1' });
    assert.equal(blank.status, 400);
    assert.match(blank.text, again);
    assert.match(
      blank.text,
      /<input id="sso-create-save_anyway" type="checkbox" name="save_anyway" value="on" checked=""/,
      '"Save anyway" stays offered and ticked',
    );
    assert.equal((await t.deps.db.selectFrom('sso_providers').select('id').execute()).length, 0, 'nothing saved');

    const typed = await c.post('/settings/sso', {
      ...fields,
      save_anyway: 'on',
      secret_retry: '1',
      client_secret: SECRET,
    });
    assert.equal(typed.location, '/settings?tab=sso&notice=created-unchecked');
    assert.equal((await provider('okta')).client_secret, SECRET);

    const skipped = await c.post('/settings/sso', {
      ...fields,
      slug: 'okta-2',
      save_anyway: 'on',
      secret_retry: '1',
      secret_skip: 'on',
    });
    assert.equal(skipped.location, '/settings?tab=sso&notice=created-unchecked', 'an explicit choice of no secret');
    assert.equal((await provider('okta-2')).client_secret, null);

    const dup = await c.post('/settings/sso', { ...fields, client_secret: SECRET, save_anyway: 'on' });
    assert.equal(dup.status, 409);
    assert.match(dup.text, again, 'every refusal of a form that carried a secret asks again');
    const plain = await c.post('/settings/sso', { ...fields, slug: 'Bad Slug' });
    assert.doesNotMatch(plain.text, /secret_retry|was not kept/, 'no secret given, nothing to ask again');
    for (const text of [refused.text, blank.text, dup.text, t.logs.join('')]) assert.ok(!text.includes(SECRET));
  });

  test('a refused new client secret is asked for again; a blank resubmission does not quietly keep the old one', async () => {
    await declare({ client_secret: 'old-secret-value' });
    const { id } = await provider();
    const refused = await c.post('/settings/sso/secret', { id, client_secret: `${SECRET}${'x'.repeat(1024)}` });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /at most 1024 characters/, "the field's own error first");
    assert.match(refused.text, /<input type="hidden" name="secret_retry" value="1"\/>/);
    assert.match(refused.text, new RegExp(`<label for="sso-secret-${id}-secret_skip">Keep the stored secret</label>`));
    assert.ok(!refused.text.includes(SECRET));
    const blank = await c.post('/settings/sso/secret', { id, secret_retry: '1' });
    assert.equal(blank.status, 400);
    assert.match(
      blank.text,
      /The new client secret was not kept because the form was refused\. Enter it again, or tick &quot;Keep the stored secret&quot;\./,
    );
    assert.equal((await provider()).client_secret, 'old-secret-value');
    assert.equal(
      (await c.post('/settings/sso/secret', { id, secret_retry: '1', secret_skip: 'on' })).location,
      '/settings?tab=sso&notice=secret-kept',
    );
    assert.equal(
      (await c.post('/settings/sso/secret', { id, secret_retry: '1', clear_secret: 'on' })).location,
      '/settings?tab=sso&notice=secret-cleared',
    );
  });
});

// A provider's issuer is what makes a `sub` mean one person: changing it drops the provider's bindings.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { confirmItsMe } from '../../../test/helpers/once.ts';
import { buildProvider, clearSsoState, newSub, redirectUrisFor, roundTrip } from '../../../test/helpers/sso.ts';
import { makeCertificates, PUBLIC_CLIENT_ID, startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { accountForIdentity, linkIdentity } from './sso.flow.service.ts';
import { changeProvider } from './sso.providers.service.ts';
import { CLI_ACTOR } from '../auth/admin-actor.ts';

// Two independent providers under one test CA: the old issuer and the new one.
let oldIdp: TestIdp;
let newIdp: TestIdp;
before(async () => {
  const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-issuer-')));
  oldIdp = await startTestIdp({ redirectUris: redirectUrisFor(['corp', 'other']), certs });
  newIdp = await startTestIdp({ redirectUris: redirectUrisFor(['corp', 'other']), certs });
});
after(async () => {
  await oldIdp.close();
  await newIdp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: { id: string; username: string; password: string };
  let ac: TestClient;
  let corp: { id: string; slug: string };

  beforeEach(async () => {
    const db = getDb().db;
    await clearSsoState(db);
    t = buildTestApp(getDb(), { oidcCaFile: oldIdp.caFile });
    admin = await buildAccount(t, { role: 'admin' });
    corp = await buildProvider(t, oldIdp, { slug: 'corp', createdBy: admin.id, displayName: 'Corp' });
    ac = await signIn(t, admin);
    await ac.get('/settings?tab=sso');
  });

  const bindings = () =>
    t.deps.db.selectFrom('sso_identities').select(['provider_id', 'sub', 'account_id']).orderBy('sub').execute();
  const providerRow = () =>
    t.deps.db.selectFrom('sso_providers').selectAll().where('id', '=', corp.id).executeTakeFirstOrThrow();
  const update = (fields: Record<string, string> = {}) =>
    ac.post('/settings/sso/update', {
      id: corp.id,
      display_name: 'Corp',
      slug: 'corp',
      issuer: oldIdp.issuer,
      client_id: PUBLIC_CLIENT_ID,
      enabled: 'on',
      ...fields,
    });
  const link = async (account: { username: string; password: string }, slug: string, sub: string, idp = oldIdp) => {
    const client = await signIn(t, account);
    await confirmItsMe(client, account.password, 'sso');
    return (await roundTrip(client, idp, `/profile/sso/${slug}/link`, sub)).location;
  };

  test('a new issuer removes the provider’s bindings, so the same sub at the new issuer signs into nothing; the admin is told how many', async () => {
    const victim = await buildAccount(t);
    const bob = await buildAccount(t);
    const other = await buildProvider(t, oldIdp, { slug: 'other', createdBy: admin.id });
    assert.equal(await link(victim, 'corp', 'user-42'), '/profile?sso=linked#profile-sso');
    assert.equal(await link(bob, 'corp', newSub()), '/profile?sso=linked#profile-sso');
    const elsewhere = newSub();
    assert.equal(await link(bob, 'other', elsewhere), '/profile?sso=linked#profile-sso');

    const res = await update({ issuer: newIdp.issuer });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/settings?tab=sso&notice=issuer-changed&removed=2');
    const page = await ac.get(res.location!);
    assert.match(page.text, /Its issuer changed, so 2 linked identities were removed/);
    assert.match(page.text, /links their identity again from their Profile/);
    assert.equal((await providerRow()).issuer, newIdp.issuer);
    assert.deepEqual(
      await bindings(),
      [{ provider_id: other.id, sub: elsewhere, account_id: bob.id }],
      'other providers keep theirs',
    );
    assert.ok(t.logs.some((l) => l.includes('"event":"sso-issuer-changed"') && l.includes('"removedIdentities":2')));

    // Whoever holds `user-42` at the new issuer is nobody here.
    const stranger = t.client();
    const signInAtNew = await roundTrip(stranger, newIdp, '/login/sso/corp', 'user-42');
    assert.equal(signInAtNew.status, 403);
    assert.match(signInAtNew.text, /not linked to any account/);
    const sessions = await t.deps.db
      .selectFrom('sessions')
      .select('account_id')
      .where('account_id', '=', victim.id)
      .execute();
    assert.equal(sessions.length, 1, 'only the victim’s own password session');

    // The victim links again at the new issuer, and that identity signs in.
    const theirNewSub = newSub();
    assert.equal(await link(victim, 'corp', theirNewSub, newIdp), '/profile?sso=linked#profile-sso');
    assert.equal((await roundTrip(t.client(), newIdp, '/login/sso/corp', theirNewSub)).location, '/');
  });

  test('saving without changing the issuer keeps the bindings, whatever else changes', async () => {
    const alice = await buildAccount(t);
    const sub = newSub();
    await link(alice, 'corp', sub);
    const res = await update({ display_name: 'Corporate', slug: 'corporate', client_id: 'another-client' });
    assert.equal(res.location, '/settings?tab=sso&notice=updated');
    assert.deepEqual(await bindings(), [{ provider_id: corp.id, sub, account_id: alice.id }]);
  });

  test('the issuer change and the binding removal are one transaction: a refused save removes nothing', async () => {
    await buildProvider(t, oldIdp, { slug: 'other', createdBy: admin.id });
    const alice = await buildAccount(t);
    await link(alice, 'corp', newSub());
    const res = await update({ issuer: newIdp.issuer, slug: 'other' });
    assert.equal(res.status, 409);
    assert.match(res.text, /Another provider already uses this slug/);
    assert.equal((await providerRow()).issuer, oldIdp.issuer);
    assert.equal((await bindings()).length, 1);
  });

  test('with no binding, or an odd ?removed=, the notice still says what happened and reflects nothing', async () => {
    const res = await update({ issuer: newIdp.issuer });
    assert.equal(res.location, '/settings?tab=sso&notice=issuer-changed&removed=0');
    assert.match((await ac.get(res.location!)).text, /Its issuer changed, so no identity was linked through it/);
    assert.match(
      (await ac.get('/settings?tab=sso&notice=issuer-changed&removed=1')).text,
      /so 1 linked identity was removed/,
    );
    const odd = await ac.get('/settings?tab=sso&notice=issuer-changed&removed=%3Cb%3E7');
    assert.match(odd.text, /so the identities linked through it were removed/);
    assert.doesNotMatch(odd.text, /<b>7/);
  });

  test('the issuer field warns how many identities a change would remove', async () => {
    assert.match(
      (await ac.get('/settings?tab=sso')).text,
      /Changing the issuer removes any identity linked through this provider/,
    );
    await link(await buildAccount(t), 'corp', newSub());
    await link(await buildAccount(t), 'corp', newSub());
    assert.match(
      (await ac.get('/settings?tab=sso')).text,
      /Changing the issuer removes the 2 identities linked through this provider/,
    );
  });

  test('an identity verified at the old issuer neither links nor signs in once the issuer changed (or the provider is gone)', async () => {
    const alice = await buildAccount(t);
    const bob = await buildAccount(t);
    const verifiedAt = await providerRow();
    const sub = newSub();
    // The callback verified `sub` at the old issuer; the admin saves the new one before the binding is written.
    const changed = await changeProvider(t.deps, CLI_ACTOR, {
      id: corp.id,
      display_name: 'Corp',
      slug: 'corp',
      issuer: newIdp.issuer,
      client_id: PUBLIC_CLIENT_ID,
      enabled: true,
    });
    assert.deepEqual(changed, { ok: true, issuerChanged: true, removedIdentities: 0, endedSessions: 0 });
    assert.deepEqual(await linkIdentity(t.deps, alice.id, verifiedAt, { sub, label: 'x' }), {
      ok: false,
      reason: 'provider-changed',
    });
    assert.equal((await bindings()).length, 0);
    // The same sub, linked at the new issuer by someone else, is not who the old issuer vouched for.
    assert.equal(await link(bob, 'corp', sub, newIdp), '/profile?sso=linked#profile-sso');
    assert.deepEqual(await accountForIdentity(t.deps, verifiedAt, sub), { ok: false, reason: 'unbound' });
    assert.equal((await accountForIdentity(t.deps, await providerRow(), sub)).ok, true);

    await ac.post('/settings/sso/delete', { id: corp.id, confirm: 'yes' });
    assert.deepEqual(await linkIdentity(t.deps, alice.id, verifiedAt, { sub: newSub(), label: 'x' }), {
      ok: false,
      reason: 'provider-changed',
    });
  });
});

// A suspended account cannot sign in by single sign-on; the callback refuses with a clear page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';
import { buildProvider, clearSsoState, newSub, redirectUrisFor, roundTrip } from '../../../test/helpers/sso.ts';
import { makeCertificates, startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';

let idp: TestIdp;
before(async () => {
  const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-suspended-')));
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['pub']), certs });
});
after(async () => {
  await idp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
  });

  test('a bound identity of a suspended account is refused at the callback; reactivation lets it in again', async () => {
    const admin = await buildAccount(t, { role: 'admin' });
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const user = await buildAccount(t);
    const sub = newSub();
    await t.deps.db
      .insertInto('sso_identities')
      .values({ id: `b-${sub}`, provider_id: p.id, sub, account_id: user.id, label: sub, linked_at: 1 })
      .execute();
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', user.id).execute();

    const c = t.client();
    const refused = await roundTrip(c, idp, '/login/sso/pub', sub);
    assert.equal(refused.status, 403);
    assert.match(refused.text, /Account suspended/);
    assert.match(refused.text, /is suspended, so it cannot sign in\. Ask an administrator to reactivate it\./);
    assert.equal(
      (await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', user.id).execute()).length,
      0,
    );
    assert.equal(
      (
        await t.deps.db
          .selectFrom('accounts')
          .select('last_sign_in_at')
          .where('id', '=', user.id)
          .executeTakeFirstOrThrow()
      ).last_sign_in_at,
      null,
    );

    await t.deps.db.updateTable('accounts').set({ suspended_at: null }).where('id', '=', user.id).execute();
    const res = await roundTrip(t.client(), idp, '/login/sso/pub', sub);
    assert.equal(res.status, 303);
    assert.equal(res.location, '/');
    const row = await t.deps.db
      .selectFrom('accounts')
      .select('last_sign_in_at')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.last_sign_in_at, t.clock.now(), 'a single sign-on sign-in is recorded too');
  });
});

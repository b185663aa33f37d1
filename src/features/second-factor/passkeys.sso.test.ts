// After single sign-on, an account that holds a passkey (and no TOTP) still owes its second factor, and answers it with
// the passkey: the test IdP (a real oidc-provider) signs the user in, svc asks for the passkey.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import {
  bindIdentity,
  buildProvider,
  clearSsoState,
  newSub,
  redirectUrisFor,
  roundTrip,
} from '../../../test/helpers/sso.ts';
import { makeCertificates, startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { optionsFrom, registerPasskeyFor, SoftAuthenticator } from '../../../test/helpers/webauthn.ts';

let idp: TestIdp;
before(async () => {
  const certs = makeCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sso-passkey-')));
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['pub']), certs });
});
after(async () => {
  await idp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('passkeys').execute();
    await clearSsoState(getDb().db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
  });

  test('single sign-on lands a passkey holder on the second-factor step, which its passkey completes', async () => {
    const admin = await buildAccount(t, { role: 'admin' });
    const p = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id });
    const user = await buildAccount(t);
    const sub = newSub();
    await bindIdentity(t, { providerId: p.id, sub, accountId: user.id });
    const authenticator = new SoftAuthenticator();
    const holder = await signIn(t, user);
    assert.equal((await registerPasskeyFor(holder, user.password, authenticator)).status, 303);

    const c = t.client();
    const landed = await roundTrip(c, idp, '/login/sso/pub', sub);
    assert.equal(landed.location, '/login/totp', 'the passkey is owed after single sign-on');
    assert.equal((await c.get('/')).location, '/login/totp', 'nothing else is reachable before it');
    const step = await c.get('/login/totp');
    assert.match(step.text, /Use your passkey/);
    const options = await optionsFrom(c, '/login/totp/passkey/options');
    const done = await c.post('/login/totp/passkey', { answer: JSON.stringify(authenticator.assert(options)) });
    assert.equal(done.location, '/');
    assert.equal((await c.get('/')).status, 200);
  });
});

// Asking for passkey sign-in options (POST /login/passkey/options, anonymous, each ask holding a challenge): refused
// with nothing written while the address is locked out of signing in, limited per address, and capped for all
// addresses together, so no client can fill the challenge table.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { optionsFrom, registerPasskeyFor, SoftAuthenticator } from '../../../test/helpers/webauthn.ts';
import { CHALLENGE_TTL_MS } from './passkeys.ceremony.ts';

const METRICS_TOKEN = 'metrics-token-for-passkey-option-tests';

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    await getDb().db.deleteFrom('webauthn_challenges').execute();
    t = buildTestApp(getDb(), { metricsToken: METRICS_TOKEN });
  });

  const challenges = () => t.deps.db.selectFrom('webauthn_challenges').selectAll().orderBy('owner_hash').execute();
  const throttleRows = () => t.deps.db.selectFrom('auth_throttle').selectAll().orderBy('key').execute();
  /** A fresh browser (no cookie, as a script would be) asking for options. */
  const ask = () => t.client().post('/login/passkey/options');
  const metrics = async () =>
    (await t.app.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();

  test('an address locked out of signing in is told so when it asks, and the ask writes nothing', async () => {
    const client = t.client();
    await client.get('/login');
    for (let i = 0; i < 30; i++) await client.post('/login', { username: `nobody-${i}`, password: 'wrong' });
    const rows = await throttleRows();
    const held = await challenges();

    const refused = await ask();
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.text).error, /^Too many failed attempts\. Try again in 15 minutes\.$/);
    assert.equal(refused.headers.get('retry-after'), '900');
    assert.ok(!refused.headers.getSetCookie().some((c) => c.includes('passkey')), 'no pending sign-in cookie');
    assert.deepEqual(await challenges(), held, 'no challenge held');
    assert.deepEqual(await throttleRows(), rows, 'no throttle row written');
    assert.match(await metrics(), /svc_passkey_signins_total\{step="sign_in",outcome="throttled"\} 1/);

    // The lock lifts by itself, and asking works again.
    t.clock.advance(15 * 60_000);
    assert.equal((await ask()).status, 200);
  });

  test('one address may ask 30 times in 15 minutes, then not until they are over; signing in is not limited by it', async () => {
    const account = await buildAccount(t);
    for (let i = 0; i < 30; i++) assert.equal((await ask()).status, 200, `ask ${i + 1}`);
    assert.equal((await challenges()).length, 30);

    const refused = await ask();
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.text).error, /^Too many failed attempts\. Try again in 15 minutes\.$/);
    assert.equal((await challenges()).length, 30, 'the refused ask held no challenge');
    // Asking is no failed sign-in: the password still signs in from this address.
    assert.equal((await (await signIn(t, account)).get('/')).status, 200);

    t.clock.advance(15 * 60_000);
    assert.equal((await ask()).status, 200, 'a new window, new asks');
  });

  test('a successful passkey sign-in gives its ask back', async () => {
    const account = await buildAccount(t);
    const authenticator = new SoftAuthenticator();
    const owner = await signIn(t, account);
    assert.equal((await registerPasskeyFor(owner, account.password, authenticator, 'Laptop')).status, 303);
    for (let i = 0; i < 29; i++) assert.equal((await ask()).status, 200, `ask ${i + 1}`);
    const client = t.client();
    await client.get('/login');
    const options = await optionsFrom(client, '/login/passkey/options');
    const signedIn = await client.post('/login/passkey', { answer: JSON.stringify(authenticator.assert(options)) });
    assert.equal(signedIn.location, '/');
    assert.equal((await ask()).status, 200, 'the 31st ask fits: the sign-in gave one back');
    assert.equal((await ask()).status, 429);
  });

  test('past the cap on pending sign-ins (all addresses), asking is refused for a minute and holds nothing', async () => {
    t = buildTestApp(getDb(), { metricsToken: METRICS_TOKEN, pendingPasskeySignInsMax: 3 });
    for (let i = 0; i < 3; i++) assert.equal((await ask()).status, 200, `ask ${i + 1}`);
    const rows = await throttleRows();
    const held = await challenges();

    const busy = await ask();
    assert.equal(busy.status, 503);
    assert.match(JSON.parse(busy.text).error, /Try again in a minute, or sign in with your password\./);
    assert.equal(busy.headers.get('retry-after'), '60');
    assert.deepEqual(await challenges(), held, 'no challenge held');
    assert.deepEqual(await throttleRows(), rows, 'nor counted against the address');
    assert.match(await metrics(), /svc_passkey_signins_total\{step="sign_in",outcome="busy"\} 1/);

    // Expired challenges no longer count, pruned or not.
    t.clock.advance(CHALLENGE_TTL_MS);
    assert.equal((await ask()).status, 200);
  });
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { confirmItsMe } from '../../../test/helpers/once.ts';
import {
  buildProvider,
  clearSsoState,
  newSub,
  pathOf,
  redirectUrisFor,
  roundTrip,
  startAndAuthorize,
} from '../../../test/helpers/sso.ts';
import { startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { startFlow } from './sso.flow.service.ts';
import { LABEL_MAX, labelFrom } from './sso.oidc.ts';

let idp: TestIdp;
before(async () => {
  idp = await startTestIdp({ redirectUris: redirectUrisFor(['pub', 'conf']) });
});
after(async () => {
  await idp.close();
});

forEachDialect((getDb) => {
  let t: TestApp;
  let provider: { id: string; slug: string };

  beforeEach(async () => {
    const db = getDb().db;
    await clearSsoState(db);
    t = buildTestApp(getDb(), { oidcCaFile: idp.caFile });
    const admin = await buildAccount(t, { role: 'admin' });
    provider = await buildProvider(t, idp, { slug: 'pub', createdBy: admin.id, displayName: 'Corp IdP' });
  });

  /** A browser signed in as `account` that confirmed it's them (a link starts only within 10 minutes of that). */
  const signInConfirmed = async (account: { username: string; password: string }) => {
    const client = await signIn(t, account);
    await confirmItsMe(client, account.password, 'sso');
    return client;
  };
  const bindings = () =>
    t.deps.db
      .selectFrom('sso_identities')
      .select(['id', 'provider_id', 'sub', 'account_id', 'label', 'linked_at'])
      .orderBy('sub')
      .execute();

  test('linking from the profile records (provider, sub) on the caller; the identity then signs in', async () => {
    const alice = await buildAccount(t);
    const c = await signInConfirmed(alice);
    const sub = newSub();
    idp.claims.set(sub, { email: 'alice@corp.example' });
    const start = await c.get('/profile/sso/pub/link');
    assert.equal(
      new URL(start.location!).searchParams.get('redirect_uri'),
      'http://localhost/profile/sso/pub/link/callback',
    );
    const res = await c.get(pathOf(await idp.authorize(start.location!, sub)));
    assert.equal(res.status, 303);
    assert.equal(res.location, '/profile?sso=linked#profile-sso');
    assert.deepEqual(
      (await bindings()).map((b) => [b.provider_id, b.sub, b.account_id, b.label, b.linked_at]),
      [[provider.id, sub, alice.id, 'alice@corp.example', t.clock.now()]],
    );
    const fresh = t.client();
    assert.equal((await roundTrip(fresh, idp, '/login/sso/pub', sub)).location, '/');
    assert.match((await fresh.get('/')).text, new RegExp(alice.username));
  });

  test('re-linking one’s own identity is a no-op', async () => {
    const alice = await buildAccount(t);
    const c = await signInConfirmed(alice);
    const sub = newSub();
    await roundTrip(c, idp, '/profile/sso/pub/link', sub);
    const first = await bindings();
    t.clock.advance(60_000);
    const again = await roundTrip(c, idp, '/profile/sso/pub/link', sub);
    assert.equal(again.location, '/profile?sso=already#profile-sso');
    assert.deepEqual(await bindings(), first);
  });

  test('an identity bound to another account is refused; one identity per provider per account', async () => {
    const alice = await buildAccount(t);
    const bob = await buildAccount(t);
    const a = await signInConfirmed(alice);
    const b = await signInConfirmed(bob);
    const aliceSub = newSub();
    await roundTrip(a, idp, '/profile/sso/pub/link', aliceSub);
    const foreign = await roundTrip(b, idp, '/profile/sso/pub/link', aliceSub);
    assert.equal(foreign.status, 409);
    assert.match(foreign.text, /already linked to another account/);
    const second = await roundTrip(a, idp, '/profile/sso/pub/link', newSub());
    assert.equal(second.status, 409);
    assert.match(second.text, /already linked to a different identity at this provider/);
    assert.deepEqual(
      (await bindings()).map((x) => [x.sub, x.account_id]),
      [[aliceSub, alice.id]],
    );
  });

  test('an account may link one identity at each of two providers', async () => {
    const admin = await buildAccount(t, { role: 'admin' });
    await buildProvider(t, idp, { slug: 'conf', createdBy: admin.id, confidential: true });
    const alice = await buildAccount(t);
    const c = await signInConfirmed(alice);
    assert.equal(
      (await roundTrip(c, idp, '/profile/sso/pub/link', newSub())).location,
      '/profile?sso=linked#profile-sso',
    );
    assert.equal(
      (await roundTrip(c, idp, '/profile/sso/conf/link', newSub())).location,
      '/profile?sso=linked#profile-sso',
    );
    assert.equal((await bindings()).length, 2);
  });

  test('unlink removes only the caller’s own binding; a foreign or stale id is a no-op', async () => {
    const alice = await buildAccount(t);
    const bob = await buildAccount(t);
    const a = await signInConfirmed(alice);
    const b = await signInConfirmed(bob);
    await roundTrip(a, idp, '/profile/sso/pub/link', newSub());
    await roundTrip(b, idp, '/profile/sso/pub/link', newSub());
    const mine = (await bindings()).find((x) => x.account_id === alice.id)!;
    const theirs = (await bindings()).find((x) => x.account_id === bob.id)!;
    await a.get('/login');
    const unchanged = '/profile?sso=unchanged#profile-sso';
    assert.equal(
      (await a.post('/profile/sso/unlink', { id: theirs.id })).location,
      unchanged,
      'a foreign id changes nothing and says so',
    );
    assert.equal((await a.post('/profile/sso/unlink', { id: 'stale-id' })).location, unchanged);
    // A malformed id is refused before any lookup, with the field's message in the section (PostgreSQL refuses NUL).
    const malformed: Record<string, string>[] = [{}, { id: 'b\u0000' }, { id: 'not an id' }];
    for (const form of malformed) {
      const refused = await a.post('/profile/sso/unlink', form);
      assert.equal(refused.status, 400, JSON.stringify(form));
      assert.match(
        refused.text,
        /id="profile-sso"><div class="notice error" role="alert">(That item no longer exists|This value cannot contain control characters)\./,
      );
    }
    assert.equal((await bindings()).length, 2);
    assert.match((await a.get(unchanged)).text, /Nothing changed: that identity is not linked to your account/);
    assert.equal((await a.post('/profile/sso/unlink', { id: mine.id })).location, '/profile?sso=unlinked#profile-sso');
    assert.deepEqual(
      (await bindings()).map((x) => x.id),
      [theirs.id],
    );
    assert.match((await a.get('/profile?sso=unlinked')).text, /Identity unlinked\./);
    assert.equal(
      (await a.post('/profile/sso/unlink', { id: mine.id })).location,
      unchanged,
      'unlinking twice says nothing changed the second time',
    );
  });

  test('the link routes need a signed-in session; a link started by one account cannot finish as another', async () => {
    const anon = t.client();
    assert.equal((await anon.get('/profile/sso/pub/link')).location, '/login');
    assert.equal((await anon.get('/profile/sso/pub/link/callback?code=x&state=y')).location, '/login');
    assert.equal((await anon.post('/profile/sso/unlink', { id: 'x' })).location, '/login');

    const alice = await buildAccount(t);
    const bob = await buildAccount(t);
    const a = await signInConfirmed(alice);
    const callback = await startAndAuthorize(a, idp, '/profile/sso/pub/link', newSub());
    const b = await signInConfirmed(bob);
    b.cookies.set('svc_sso_flow', a.cookies.get('svc_sso_flow')!);
    const res = await b.get(pathOf(callback));
    assert.equal(res.status, 400);
    assert.match(res.text, /does not belong to the sign-in this browser started/);
    assert.equal((await bindings()).length, 0);
  });

  test('a sign-in flow cookie does not complete a link, nor a link cookie a sign-in', async () => {
    const alice = await buildAccount(t);
    const a = await signInConfirmed(alice);
    const anon = t.client();
    const loginCallback = await startAndAuthorize(anon, idp, '/login/sso/pub', newSub());
    a.cookies.set('svc_sso_flow', anon.cookies.get('svc_sso_flow')!);
    const linkPath = pathOf(loginCallback).replace('/login/sso/pub/callback', '/profile/sso/pub/link/callback');
    assert.equal((await a.get(linkPath)).status, 400);
    const linkCallback = await startAndAuthorize(a, idp, '/profile/sso/pub/link', newSub());
    const other = t.client();
    other.cookies.set('svc_sso_flow', a.cookies.get('svc_sso_flow')!);
    assert.equal(
      (await other.get(pathOf(linkCallback).replace('/profile/sso/pub/link/callback', '/login/sso/pub/callback')))
        .status,
      400,
    );
    assert.equal((await bindings()).length, 0);
  });

  test('a disabled provider refuses the link at start and at an in-flight callback', async () => {
    const alice = await buildAccount(t);
    const a = await signInConfirmed(alice);
    const callback = await startAndAuthorize(a, idp, '/profile/sso/pub/link', newSub());
    await t.deps.db.updateTable('sso_providers').set({ enabled: 0 }).execute();
    assert.equal((await a.get(pathOf(callback))).status, 403);
    assert.equal((await a.get('/profile/sso/pub/link')).status, 403);
    assert.equal((await bindings()).length, 0);
  });

  test('a link cannot be started from another site (403, nothing started); sign-in still can; the callback may arrive cross-site', async () => {
    const alice = await buildAccount(t);
    const c = await signInConfirmed(alice);
    for (const site of ['cross-site', 'same-site']) {
      // An attacker's page navigates the victim's browser here; the SameSite=Lax session cookie rides along.
      const res = await c.get('/profile/sso/pub/link', { 'sec-fetch-site': site, referer: 'https://evil.example/' });
      assert.equal(res.status, 403, site);
      assert.equal(res.location, undefined, site);
      assert.match(res.text, /can only be started from your Profile on this site/, site);
      assert.ok(!c.cookies.has('svc_sso_flow'), `${site}: no flow started`);
    }
    assert.ok(t.logs.some((l) => l.includes('sso: link start from another site refused')));
    for (const site of ['same-origin', 'none']) {
      const res = await c.get('/profile/sso/pub/link', { 'sec-fetch-site': site });
      assert.equal(res.status, 303, site);
      assert.ok(res.location!.startsWith(`${idp.issuer}/`), site);
    }
    // Providers' portals link to the sign-in start: that stays open to other sites.
    const portal = await t.client().get('/login/sso/pub', { 'sec-fetch-site': 'cross-site' });
    assert.equal(portal.status, 303);
    assert.ok(portal.location!.startsWith(`${idp.issuer}/`));
    // The provider's redirect back is itself a cross-site navigation.
    const sub = newSub();
    const callback = await startAndAuthorize(c, idp, '/profile/sso/pub/link', sub);
    assert.equal(
      (await c.get(pathOf(callback), { 'sec-fetch-site': 'cross-site' })).location,
      '/profile?sso=linked#profile-sso',
    );
    assert.deepEqual(
      (await bindings()).map((b) => [b.sub, b.account_id]),
      [[sub, alice.id]],
    );
  });

  test('a link makes the provider authenticate afresh (prompt=login), whatever session the browser holds there; sign-in does not', async () => {
    const alice = await buildAccount(t);
    const c = await signInConfirmed(alice);
    // The browser's session at the provider belongs to someone else (a shared device, or a login CSRF at the provider).
    const theirs = newSub();
    const mine = newSub();
    await startAndAuthorize(t.client(), idp, '/login/sso/pub', theirs);
    // Control: a sign-in reuses that session without asking (so the session really is there).
    const asked = idp.interactions.length;
    const signInStart = await t.client().get('/login/sso/pub');
    assert.equal(new URL(signInStart.location!).searchParams.get('prompt'), null);
    await idp.authorize(signInStart.location!, mine, { keepSession: true });
    assert.equal(idp.interactions.length, asked, 'sign-in reused the provider session');

    const start = await c.get('/profile/sso/pub/link', { 'sec-fetch-site': 'same-origin' });
    assert.equal(new URL(start.location!).searchParams.get('prompt'), 'login');
    const callback = await idp.authorize(start.location!, mine, { keepSession: true });
    assert.deepEqual(idp.interactions.slice(asked), [{ prompt: 'login', reasons: ['login_prompt'] }]);
    assert.equal((await c.get(pathOf(callback))).location, '/profile?sso=linked#profile-sso');
    assert.deepEqual(
      (await bindings()).map((b) => [b.sub, b.account_id]),
      [[mine, alice.id]],
    );
  });

  test('the binding label drops control, bidi and invisible characters from the claim and is capped', async () => {
    const alice = await buildAccount(t);
    const bob = await buildAccount(t);
    const carol = await buildAccount(t);
    const [a, b, c] = [newSub(), newSub(), newSub()];
    idp.claims.set(a, { email: '\u202Eevil\u202C@corp.example\u200B\u0007\n', name: 'Alice' });
    idp.claims.set(b, { email: '\u200B\u200E\u2028', preferred_username: ' bob\u0000 ' });
    idp.claims.set(c, { name: `${'x'.repeat(LABEL_MAX - 1)}\u{1F600}tail` });
    await roundTrip(await signInConfirmed(alice), idp, '/profile/sso/pub/link', a);
    await roundTrip(await signInConfirmed(bob), idp, '/profile/sso/pub/link', b);
    await roundTrip(await signInConfirmed(carol), idp, '/profile/sso/pub/link', c);
    const label = async (sub: string) => (await bindings()).find((x) => x.sub === sub)!.label;
    assert.equal(await label(a), 'evil@corp.example');
    assert.equal(await label(b), 'bob', 'a label with nothing printable falls through to the next claim');
    assert.equal(
      await label(c),
      `${'x'.repeat(LABEL_MAX - 1)}\u{1F600}`,
      'capped in code points, never half a surrogate pair',
    );
  });

  test('linking asks "Confirm it’s you" first: the start is refused by the service until then, and again 10 minutes later', async () => {
    const alice = await buildAccount(t);
    const a = await signIn(t, alice);
    const page = await a.get('/profile');
    assert.doesNotMatch(page.text, /href="\/profile\/sso\/pub\/link"/, 'no Link button before confirming');
    // The page's one confirm form serves the second factor, the link and tokens alike; the section points to it.
    assert.equal(page.text.match(/<form[^>]*action="\/profile\/reauth"/g)?.length, 1);
    assert.match(
      page.text,
      /id="profile-sso">[\s\S]*<a href="#profile-confirm">Confirm it’s you<\/a> above to link a sign-in provider\.[\s\S]*id="profile-tokens"/,
    );
    // The start anyway (a bookmark, a stale page, a stolen session) goes nowhere near the provider.
    const asked = idp.interactions.length;
    const refused = await a.get('/profile/sso/pub/link');
    assert.equal(refused.location, '/profile?notice=confirm-first-sso#profile-sso');
    assert.ok(!a.cookies.has('svc_sso_flow'), 'no flow started');
    assert.match(
      (await a.get(refused.location!)).text,
      /id="profile-sso"><div class="notice error" role="alert">Confirm it’s you first/,
    );

    const wrong = await a.post('/profile/reauth', { secret: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /id="confirm-secret-error">Incorrect password\./);
    const ok = await a.post('/profile/reauth', { secret: alice.password });
    assert.equal(ok.location, '/profile?notice=confirmed#profile-confirm');
    const confirmed = await a.get(ok.location!);
    assert.match(
      confirmed.text,
      /Confirmed\. For the next 10 minutes this session can[^<]*<a href="#profile-second-factor">/,
    );
    assert.match(confirmed.text, /href="\/profile\/sso\/pub\/link"/);
    for (const act of ['totp-start', 'token-mint'])
      assert.match(confirmed.text, new RegExp(`id="${act}"`), `the same confirmation opens ${act}`);
    assert.doesNotMatch(confirmed.text, /action="\/profile\/reauth"|href="#profile-confirm"/);

    t.clock.advance(10 * 60_000 - 1);
    // Started within the window, the round trip may end after it (it lasts at most 10 minutes, bound to this browser).
    const callback = await startAndAuthorize(a, idp, '/profile/sso/pub/link', newSub());
    t.clock.advance(1);
    assert.equal((await a.get(pathOf(callback))).location, '/profile?sso=linked#profile-sso');
    await a.post('/profile/sso/unlink', { id: (await bindings())[0]!.id });
    assert.match(
      (await a.get('/profile')).text,
      /<a href="#profile-confirm">Confirm it’s you<\/a> above to link/,
      'it asks again',
    );
    assert.equal((await a.get('/profile/sso/pub/link')).location, '/profile?notice=confirm-first-sso#profile-sso');
    assert.equal(idp.interactions.length, asked + 1, 'only the confirmed start reached the provider');
    assert.deepEqual(await bindings(), []);

    // The service: only a recently confirmed session of the linking account starts a link.
    const bob = await buildAccount(t);
    await signInConfirmed(bob);
    const sessionOf = async (id: string) =>
      (await t.deps.db.selectFrom('sessions').select('id_hash').where('account_id', '=', id).executeTakeFirstOrThrow())
        .id_hash;
    const redirect = 'http://localhost/profile/sso/pub/link/callback';
    assert.deepEqual(
      await startFlow(
        t.deps,
        'pub',
        { kind: 'link', accountId: alice.id, sessionIdHash: await sessionOf(bob.id) },
        redirect,
      ),
      {
        ok: false,
        reason: 'reauth-required',
      },
    );
    assert.equal(
      (
        await startFlow(
          t.deps,
          'pub',
          { kind: 'link', accountId: bob.id, sessionIdHash: await sessionOf(bob.id) },
          redirect,
        )
      ).ok,
      true,
    );
  });

  test('the Profile page’s single sign-on section lists the caller’s identities with Unlink and offers Link for the other enabled providers', async () => {
    const alice = await buildAccount(t);
    const a = await signInConfirmed(alice);
    const sub = newSub();
    idp.claims.set(sub, { email: 'alice@corp.example' });
    const before = await a.get('/profile');
    assert.match(before.text, /href="\/profile\/sso\/pub\/link"/);
    assert.match(before.text, /Link Corp IdP/);
    await roundTrip(a, idp, '/profile/sso/pub/link', sub);
    const after = await a.get('/profile?sso=linked');
    assert.match(after.text, /Identity linked/);
    assert.match(after.text, /alice@corp\.example/);
    assert.match(after.text, /Unlink Corp IdP/);
    assert.doesNotMatch(after.text, /href="\/profile\/sso\/pub\/link"/);
  });
});

test('labelFrom: strings only, unprintable characters removed, trimmed, capped; empty when nothing is left', () => {
  assert.equal(labelFrom(5), '');
  assert.equal(labelFrom(['a']), '');
  assert.equal(labelFrom('  a\u00ADb\u2066c\u2069\uFEFF  '), 'abc');
  assert.equal(labelFrom('\u0085\u2029'), '');
  assert.equal(labelFrom('é'.repeat(LABEL_MAX + 10)), 'é'.repeat(LABEL_MAX));
});

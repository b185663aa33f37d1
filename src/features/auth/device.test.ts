// The device cookie: a lock on a username (anyone can fill the per-account limit) does not keep out a browser that
// signed in to that account before; every other client, and every other limit, still applies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../../test/helpers/app.ts';
import { lockUsername, returningClient } from '../../../test/helpers/device.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { atEnrolStep, atTotpStep, enrolTotp, signInWithTotp } from '../../../test/helpers/second-factor.ts';
import { DEVICE_TTL_MS, parseDeviceToken } from './device.ts';

const OWNER_ADDRESS = '203.0.113.9';

forEachDialect((getDb) => {
  test('a locked username still lets in the browser that signed in before; a new client is refused', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t, { role: 'admin' });
    const owner = await returningClient(t, a, OWNER_ADDRESS);
    await lockUsername(t, a.username);

    const stranger = t.client();
    stranger.address = '192.0.2.200';
    assert.equal(
      (await stranger.post('/login', { username: a.username, password: a.password })).status,
      429,
      'unknown clients are held to the username lock',
    );
    const neighbour = t.client();
    neighbour.address = OWNER_ADDRESS;
    assert.equal(
      (await neighbour.post('/login', { username: a.username, password: a.password })).status,
      429,
      'the address alone proves nothing',
    );

    const res = await owner.post('/login', { username: a.username.toUpperCase(), password: a.password });
    assert.equal(res.status, 303, 'the owner signs in');
    assert.equal((await owner.get('/')).status, 200);
    assert.equal(
      (await stranger.post('/login', { username: a.username, password: a.password })).status,
      429,
      "the owner's sign-in does not lift the lock",
    );
  });

  test("another account's device cookie, a tampered one or an expired one gives no way past the lock", async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const b = await buildAccount(t);
    const other = await returningClient(t, b, OWNER_ADDRESS);
    const owner = await returningClient(t, a, '203.0.113.10');
    const issuedAt = t.clock.now();
    await lockUsername(t, a.username);

    assert.equal(
      (await other.post('/login', { username: a.username, password: a.password })).status,
      429,
      "b's browser is a stranger to a",
    );

    const value = decodeURIComponent(owner.cookies.get('svc_device')!);
    const signature = value.slice(value.lastIndexOf('.') + 1);
    const forged = [
      value.replace(a.id, b.id),
      value.replace(`.${issuedAt}.`, `.${issuedAt - 1}.`),
      `${value.slice(0, -44)}${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`,
      `${a.id}.0.${'x'.repeat(22)}.${issuedAt}.${signature}`,
    ];
    for (const forgery of forged) {
      assert.notEqual(forgery, value);
      const c = t.client();
      c.address = '203.0.113.11';
      c.cookies.set('svc_device', encodeURIComponent(forgery));
      assert.equal((await c.post('/login', { username: a.username, password: a.password })).status, 429, forgery);
    }
    assert.equal(
      (await owner.post('/login', { username: a.username, password: a.password })).status,
      303,
      'the genuine cookie works',
    );
    await owner.post('/logout');

    // A year later the cookie no longer counts, even if the browser kept it.
    t.clock.advance(DEVICE_TTL_MS);
    await lockUsername(t, a.username);
    assert.equal((await owner.post('/login', { username: a.username, password: a.password })).status, 429);
  });

  test('the device cookie never lifts the pair or address limits, and guesses with it are limited per device', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const owner = await returningClient(t, a, '203.0.113.30');
    const sameAddress = t.client();
    sameAddress.address = '203.0.113.30';
    for (let i = 0; i < 5; i++)
      await sameAddress.post('/login', { username: a.username, password: `guess-${i}-guess` });
    assert.equal(
      (await owner.post('/login', { username: a.username, password: a.password })).status,
      429,
      'the pair lock holds',
    );

    t.clock.advance(15 * 60_000 + 1);
    for (let i = 0; i < 30; i++) await sameAddress.post('/login', { username: `spray-${i}`, password: 'password123' });
    assert.equal(
      (await owner.post('/login', { username: a.username, password: a.password })).status,
      429,
      'the address lock holds',
    );

    // A stolen device cookie guesses at most 5 times per 15 minutes, whatever addresses it comes from.
    t.clock.advance(15 * 60_000 + 1);
    const value = owner.cookies.get('svc_device')!;
    for (let i = 0; i < 5; i++) {
      const thief = t.client();
      thief.address = `198.51.100.${i + 1}`;
      thief.cookies.set('svc_device', value);
      assert.equal((await thief.post('/login', { username: a.username, password: `guess-${i}-guess` })).status, 401);
    }
    owner.address = '192.0.2.99';
    assert.equal(
      (await owner.post('/login', { username: a.username, password: a.password })).status,
      429,
      'the device is locked',
    );
  });

  test('the cookie: signed, HttpOnly, SameSite=Lax, a year long, renewed at each sign-in; __Host- and Secure when configured', async () => {
    for (const secureCookies of [false, true]) {
      const t = buildTestApp(getDb(), { secureCookies });
      const a = await buildAccount(t);
      const origin: Record<string, string> = secureCookies ? { origin: 'https://localhost' } : {};
      const res = await t.client().post('/login', { username: a.username, password: a.password }, origin);
      assert.equal(res.status, 303);
      const cookie = res.headers.getSetCookie().find((c) => c.includes('svc_device='))!;
      assert.match(cookie, secureCookies ? /^__Host-svc_device=/ : /^svc_device=/);
      assert.match(cookie, /Max-Age=31536000/);
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
      assert.match(cookie, /Path=\//);
      assert.equal(/Secure/.test(cookie), secureCookies);
      assert.ok(cookie.includes(encodeURIComponent(`${a.id}.`)), 'names the account');
    }
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const c = await returningClient(t, a, '203.0.113.40');
    const first = c.cookies.get('svc_device');
    assert.equal((await c.post('/login', { username: a.username, password: a.password })).status, 303);
    assert.notEqual(c.cookies.get('svc_device'), first);
    const failed = await t.client().post('/login', { username: a.username, password: 'not the password' });
    assert.ok(!failed.headers.getSetCookie().some((x) => x.includes('svc_device')), 'a failed sign-in sets nothing');
  });
  test('a password change voids every device cookie of the account; a sign-in after it gets one that works', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const owner = await returningClient(t, a, OWNER_ADDRESS);
    const changer = await signIn(t, a);
    const next = 'a brand new password 123';
    assert.equal(
      (await changer.post('/profile/password', { current: a.password, password: next })).location,
      '/profile?notice=password-changed',
    );
    const renewed = await returningClient(t, { username: a.username, password: next }, '203.0.113.50');
    await lockUsername(t, a.username);

    assert.equal(
      (await owner.post('/login', { username: a.username, password: next })).status,
      429,
      'issued before the change: a stranger now',
    );
    assert.equal(
      (await renewed.post('/login', { username: a.username, password: next })).status,
      303,
      'issued after it: still known',
    );
  });

  test('the device cookie is set only once the session is full: not at the code step, but after the code or enrolment', async () => {
    const t = buildTestApp(getDb());
    const a = await buildAccount(t);
    const { secret } = await enrolTotp(t, a);
    const half = await atTotpStep(t, a);
    assert.ok(!half.cookies.has('svc_device'), 'the password alone does not make the browser known');
    await half.post('/logout');
    await lockUsername(t, a.username);
    assert.equal((await half.post('/login', { username: a.username, password: a.password })).status, 429);

    t.clock.advance(15 * 60_000 + 1);
    const full = await signInWithTotp(t, a, secret);
    assert.ok(full.cookies.has('svc_device'), 'set with the code step passed');
    full.address = OWNER_ADDRESS;
    await full.post('/logout');
    await lockUsername(t, a.username);
    assert.equal(
      (await full.post('/login', { username: a.username, password: a.password })).location,
      '/login/totp',
      'and it works',
    );

    const b = await buildAccount(t, { enrolPrompt: true });
    const enrolling = await atEnrolStep(t, b);
    assert.ok(!enrolling.cookies.has('svc_device'), 'not at the enrolment offer either');
    assert.equal((await enrolling.post('/login/enrol', { action: 'skip' })).location, '/');
    assert.ok(enrolling.cookies.has('svc_device'), 'set when enrolment is skipped');
  });
});

test('parseDeviceToken takes only its own shape within the lifetime', () => {
  const now = 1_800_000_000_000;
  const nonce = 'n'.repeat(22);
  assert.deepEqual(parseDeviceToken(`acc_1.3.${nonce}.${now - 5}`, now), {
    accountId: 'acc_1',
    credentialsVersion: 3,
    nonce,
    issuedAt: now - 5,
  });
  const bad = [
    undefined,
    '',
    `acc.0.${nonce}`,
    `acc.${nonce}.${now}`,
    `acc.0.short.${now}`,
    `a c.0.${nonce}.${now}`,
    `acc.x.${nonce}.${now}`,
  ];
  for (const value of [
    ...bad,
    `acc.0.${nonce}.${now + 1}`,
    `acc.0.${nonce}.${now - DEVICE_TTL_MS}`,
    `acc.0.${nonce}.1e3`,
  ]) {
    assert.equal(parseDeviceToken(value, now), undefined, String(value));
  }
});

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, signedInAs, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { sha256 } from '../../deps.ts';
import { confirmInSettings, onceOf, submitMinting } from '../../../test/helpers/once.ts';
import { INVITATION_TTL_MS, mintInvitation } from './invitations.service.ts';

const PASSWORD = 'a long enough password';

const REVEAL_PATH = '/settings?tab=team&reveal=invitation#invite-result';
const JOIN_LINK = /<code class="secret" id="join-link">([^<]+)<\/code>/;

/**
 * Mints an invitation through the admin page (POST, redirect, GET) and returns the join link shown after it; an admin
 * invitation confirms it's them first (the test accounts' password).
 */
async function mint(
  admin: TestClient,
  role: 'admin' | 'viewer',
  note?: string,
): Promise<{ link: string; token: string; page: string; once: string }> {
  if (role === 'admin') await confirmInSettings(admin, TEST_PASSWORD);
  const { post, page, once } = await submitMinting(
    admin,
    '/settings?tab=team',
    '/settings/accounts',
    note === undefined ? { role } : { role, note },
  );
  assert.equal(post.status, 303, post.text);
  assert.equal(post.location, REVEAL_PATH);
  assert.ok(!post.text.includes('/invite?token='), 'the redirect carries no secret');
  const link = JOIN_LINK.exec(page!.text)?.[1];
  assert.ok(link, 'the join link is shown on the page after the redirect');
  const token = new URL(link).searchParams.get('token')!;
  return { link, token, page: page!.text, once };
}

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  let adminAccount: { username: string; password: string };
  beforeEach(async () => {
    const db = getDb().db;
    for (const table of [
      'sessions',
      'recovery_codes',
      'api_tokens',
      'invitations',
      'auth_throttle',
      'accounts',
    ] as const) {
      await db.deleteFrom(table).execute();
    }
    t = buildTestApp(getDb());
    const signed = await signedInAs(t, 'admin');
    admin = signed.client;
    adminId = signed.account.id;
    adminAccount = signed.account;
  });

  test('minting shows the join link once, logs it, and stores only the token hash for 7 days', async () => {
    const { link, token } = await mint(admin, 'viewer');
    assert.match(link, /^http:\/\/localhost\/invite\?token=[A-Za-z0-9_-]{43}$/, 'request origin, 256-bit token');
    const rows = await t.deps.db.selectFrom('invitations').selectAll().execute();
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.token_hash, sha256(token));
    assert.equal(row.role, 'viewer');
    assert.equal(row.created_by, adminId);
    assert.equal(row.expires_at - row.created_at, INVITATION_TTL_MS);
    assert.equal(row.spent_at, null);
    const logs = t.logs.join('');
    assert.ok(logs.includes(link), 'the join link is in the log');
    assert.ok(!logs.includes(row.token_hash), 'the stored hash is not logged');

    const list = await admin.get('/settings?tab=team');
    assert.equal(list.status, 200);
    assert.ok(!list.text.includes(token), 'the token is never shown again');
    assert.match(list.text, /Open invitations[\s\S]*viewer[\s\S]*pending/);
  });

  test('the join link uses SVC_EXTERNAL_URL when it is set', async () => {
    const external = buildTestApp(getDb(), { externalUrl: 'https://svc.example.test' });
    const account = await buildAccount(external, { role: 'admin' });
    const client = external.client();
    const origin = { origin: 'https://svc.example.test' };
    assert.equal(
      (await client.post('/login', { username: account.username, password: account.password }, origin)).status,
      303,
    );
    await client.get('/settings?tab=team');
    assert.equal((await client.post('/settings/accounts/reauth', { secret: account.password }, origin)).status, 303);
    const form = await client.get('/settings?tab=team');
    const res = await client.post(
      '/settings/accounts',
      { role: 'admin', _once: onceOf(form.text, '/settings/accounts') },
      origin,
    );
    assert.equal(res.status, 303);
    assert.match(
      (await client.get(res.location!)).text,
      /https:\/\/svc\.example\.test\/invite\?token=[A-Za-z0-9_-]{43}/,
    );
  });

  test('a viewer cannot mint; a bad role is a form error', async () => {
    const { client: viewer } = await signedInAs(t, 'viewer');
    assert.equal((await viewer.post('/settings/accounts', { role: 'viewer' })).status, 403);
    const { post: bad } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', { role: 'owner' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Choose the role admin or viewer/);
    assert.equal((await t.deps.db.selectFrom('invitations').select('id').execute()).length, 0);
  });

  test('accepting creates the account at the invitation role, spends the token, grants no session', async () => {
    const { token } = await mint(admin, 'viewer');
    const invitee = t.client();
    const page = await invitee.get(`/invite?token=${token}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('referrer-policy'), 'strict-origin');
    assert.match(page.text, /with the role <strong>viewer<\/strong>/);

    // An extra role field is ignored: the role comes from the invitation.
    const res = await invitee.post('/invite', { token, username: 'Vera', password: PASSWORD, role: 'admin' });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/login?notice=invited');
    assert.equal(res.headers.get('referrer-policy'), 'strict-origin');
    assert.equal(invitee.cookies.size, 0, 'no session cookie');
    const account = await t.deps.db
      .selectFrom('accounts')
      .selectAll()
      .where('username', '=', 'Vera')
      .executeTakeFirstOrThrow();
    assert.equal(account.role, 'viewer');
    assert.equal(account.totp_enrol_prompt, 1, 'enrols a second factor at first sign-in');
    assert.match(account.password_hash, /^\$argon2id\$/);
    const invitation = await t.deps.db.selectFrom('invitations').selectAll().executeTakeFirstOrThrow();
    assert.equal(invitation.spent_at, t.clock.now());

    const login = await invitee.get('/login?notice=invited');
    assert.match(login.text, /Your account is ready/);
    const signin = await invitee.post('/login', { username: 'vera', password: PASSWORD });
    assert.equal(signin.status, 303);

    // Spent: inert from now on.
    assert.equal((await t.client().get(`/invite?token=${token}`)).status, 410);
    const again = await t.client().post('/invite', { token, username: 'other', password: PASSWORD });
    assert.equal(again.status, 410);
    assert.match(again.text, /This invitation is not valid/);
    assert.equal((await t.deps.db.selectFrom('accounts').select('id').execute()).length, 2);
  });

  test('an admin invitation creates an admin', async () => {
    const { token } = await mint(admin, 'admin');
    assert.equal(
      (await t.client().post('/invite', { token, username: 'ada', password: PASSWORD, role: 'viewer' })).status,
      303,
    );
    const row = await t.deps.db
      .selectFrom('accounts')
      .select('role')
      .where('username', '=', 'ada')
      .executeTakeFirstOrThrow();
    assert.equal(row.role, 'admin');
  });

  test('missing, unknown, malformed, expired and revoked tokens show the invalid page and create nothing', async () => {
    const { token: fresh } = await mint(admin, 'viewer');
    const { token: revoked } = await mint(admin, 'viewer');
    const revokedRow = await t.deps.db
      .selectFrom('invitations')
      .select('id')
      .where('token_hash', '=', sha256(revoked))
      .executeTakeFirstOrThrow();
    assert.equal(
      (await admin.post('/settings/accounts/invitations/revoke', { invitation: revokedRow.id })).location,
      '/settings?tab=team&notice=revoked',
    );

    t.clock.advance(INVITATION_TTL_MS - 60_000);
    assert.equal((await t.client().get(`/invite?token=${fresh}`)).status, 200, 'still valid just before 7 days');
    t.clock.advance(60_000);
    const cases = [
      '',
      '?token=',
      `?token=${'A'.repeat(43)}`,
      '?token=not-a-token',
      `?token=${fresh}`,
      `?token=${revoked}`,
    ];
    for (const query of cases) {
      const res = await t.client().get(`/invite${query}`);
      assert.equal(res.status, 410, query);
      assert.match(res.text, /This invitation is not valid/);
      assert.equal(res.headers.get('referrer-policy'), 'strict-origin');
    }
    for (const token of [undefined, 'A'.repeat(43), fresh, revoked]) {
      const fields: Record<string, string> = { username: 'newcomer', password: PASSWORD };
      if (token) fields.token = token;
      assert.equal((await t.client().post('/invite', fields)).status, 410, String(token));
    }
    assert.equal((await t.deps.db.selectFrom('accounts').select('id').execute()).length, 1);

    // Seven days on, the admin signs in afresh (sessions last at most 7 days) and sees the invitation expired.
    const list = await (await signIn(t, adminAccount)).get('/settings?tab=team');
    assert.match(list.text, /<span class="badge">expired<\/span>/);
    assert.equal(
      (await t.deps.db.selectFrom('invitations').select('id').where('revoked_at', 'is not', null).execute()).length,
      1,
    );
  });

  test('bad input and a taken username are form errors that leave the token unspent', async () => {
    const existing = await buildAccount(t, { username: 'Taken' });
    const { token } = await mint(admin, 'viewer');
    const cases: [Record<string, string>, number, RegExp][] = [
      [{ token, username: 'x'.repeat(65), password: PASSWORD }, 400, /at most 64 characters/],
      [{ token, username: 'ok', password: 'short' }, 400, /at least 8 characters/],
      [{ token, username: 'ok', password: 'p'.repeat(73) }, 400, /at most 72 characters/],
      [{ token, username: '  ', password: PASSWORD }, 400, /Enter a username/],
      [{ token, username: existing.username.toLowerCase(), password: PASSWORD }, 409, /That username is taken/],
    ];
    for (const [fields, status, message] of cases) {
      const res = await t.client().post('/invite', fields);
      assert.equal(res.status, status, JSON.stringify(fields));
      assert.match(res.text, message);
      assert.match(res.text, new RegExp(`name="token" value="${token}"`), 'the form keeps the token');
    }
    // Every problem at once, in the fields' order, under the page's summary: the taken name and the short password.
    const both = await t.client().post('/invite', { token, username: 'TAKEN', password: 'short' });
    assert.equal(both.status, 400);
    assert.match(
      both.text,
      /<h2 id="join-summary">There are 2 problems<\/h2><ul><li><a href="#join-username">That username is taken\. Choose another\.<\/a><\/li><li><a href="#join-password">[^<]*at least 8 characters/,
    );
    await buildAccount(t, { username: 'pool' });
    assert.match(
      (await t.client().post('/invite', { token, username: 'p00l', password: 'short' })).text,
      /looks like an existing one/,
      'a look-alike too',
    );
    const row = await t.deps.db.selectFrom('invitations').select('spent_at').executeTakeFirstOrThrow();
    assert.equal(row.spent_at, null);
    assert.equal((await t.client().post('/invite', { token, username: 'fresh-name', password: PASSWORD })).status, 303);
  });

  test('a look-alike or mixed-script username is a form error at join; single-script names in any script are accepted', async () => {
    await buildAccount(t, { username: 'admin' });
    await buildAccount(t, { username: 'pop' });
    const { token } = await mint(admin, 'viewer');
    const lookalike = /That username (is taken|looks like)/;
    const mixed = /cannot mix letters of different scripts/;
    const cases: [string, number, RegExp][] = [
      ['\u0430dmin', 400, mixed], // Cyrillic а among Latin letters
      ['\u0410DMIN', 400, mixed],
      ['Admin', 409, lookalike], // case-insensitive uniqueness, as before
      ['ADMIN', 409, lookalike],
      ['adrnin', 409, lookalike], // rn for m
      ['\u0440\u043e\u0440', 409, lookalike], // all-Cyrillic р о р beside Latin "pop"
    ];
    for (const [username, status, message] of cases) {
      const res = await t.client().post('/invite', { token, username, password: PASSWORD });
      assert.equal(res.status, status, username);
      assert.match(res.text, message, username);
      assert.match(res.text, /aria-invalid="true"/, 'a field message, next to the field');
    }
    assert.equal(
      (await t.deps.db.selectFrom('invitations').select('spent_at').executeTakeFirstOrThrow()).spent_at,
      null,
    );
    for (const username of ['дмитрий', '田中']) {
      const { token: fresh } = await mint(admin, 'viewer');
      assert.equal(
        (await t.client().post('/invite', { token: fresh, username, password: PASSWORD })).status,
        303,
        username,
      );
    }
    assert.equal(
      (await t.deps.db.selectFrom('accounts').select('id').where('username', 'in', ['дмитрий', '田中']).execute())
        .length,
      2,
    );
  });

  test('racing acceptances of one token create exactly one account', async () => {
    const { token } = await mint(admin, 'viewer');
    const names = ['racer-1', 'racer-2', 'racer-3', 'racer-4', 'racer-5'];
    const results = await Promise.all(
      names.map((username) => t.client().post('/invite', { token, username, password: PASSWORD })),
    );
    assert.equal(results.filter((r) => r.status === 303).length, 1);
    assert.equal(results.filter((r) => r.status === 410).length, names.length - 1);
    const created = await t.deps.db
      .selectFrom('accounts')
      .select('username')
      .where('username', 'like', 'racer-%')
      .execute();
    assert.equal(created.length, 1);
  });

  test('racing acceptances with the same username create one account and spend the token once', async () => {
    const { token } = await mint(admin, 'viewer');
    const results = await Promise.all(
      [1, 2, 3].map(() => t.client().post('/invite', { token, username: 'twin', password: PASSWORD })),
    );
    assert.equal(results.filter((r) => r.status === 303).length, 1);
    assert.ok(results.every((r) => [303, 409, 410].includes(r.status)));
    assert.equal(
      (await t.deps.db.selectFrom('accounts').select('id').where('username', '=', 'twin').execute()).length,
      1,
    );
  });

  test('revoking is idempotent and a viewer cannot revoke', async () => {
    await mint(admin, 'viewer');
    const row = await t.deps.db.selectFrom('invitations').select('id').executeTakeFirstOrThrow();
    const { client: viewer } = await signedInAs(t, 'viewer');
    assert.equal((await viewer.post('/settings/accounts/invitations/revoke', { invitation: row.id })).status, 403);
    assert.equal(
      (await admin.post('/settings/accounts/invitations/revoke', { invitation: row.id })).location,
      '/settings?tab=team&notice=revoked',
    );
    const second = await admin.post('/settings/accounts/invitations/revoke', { invitation: row.id });
    assert.equal(second.location, '/settings?tab=team&notice=not-pending');
    const page = await admin.get(second.location!);
    assert.match(page.text, /already used or revoked/);
    assert.match(page.text, /No pending or expired invitations/);
  });
  test('a reload of the page after minting shows the link no more, and a replayed post mints nothing', async () => {
    const { link, once } = await mint(admin, 'viewer');
    const reload = await admin.get(REVEAL_PATH);
    assert.equal(reload.status, 200);
    assert.ok(!reload.text.includes(link), 'a reload shows no link');
    assert.match(reload.text, /shown once and is not shown again/);
    // The same form sent again (a double click, a resent request): no second invitation, the same page.
    const replay = await admin.post('/settings/accounts', { role: 'viewer', _once: once });
    assert.equal(replay.status, 303);
    assert.equal(replay.location, REVEAL_PATH);
    assert.ok(!(await admin.get(replay.location!)).text.includes(link));
    assert.equal((await t.deps.db.selectFrom('invitations').select('id').execute()).length, 1);
    // A post with no one-time token at all mints nothing either.
    assert.equal((await admin.post('/settings/accounts', { role: 'viewer', _once: '' })).location, REVEAL_PATH);
    assert.equal((await t.deps.db.selectFrom('invitations').select('id').execute()).length, 1);
    for (const path of ['/settings?tab=team', '/settings', '/'])
      assert.ok(!(await admin.get(path)).text.includes(link), path);
  });

  test('a note labels the open invitation in the admin list only; it is trimmed, checked, and binds nothing', async () => {
    const { token } = await mint(admin, 'viewer', '  for Dana, on-call  ');
    const row = await t.deps.db.selectFrom('invitations').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.note, 'for Dana, on-call');
    assert.match(
      (await admin.get('/settings?tab=team')).text,
      /<td><span class="cell-label">Note: <\/span>for Dana, on-call<\/td>/,
    );
    const invitee = t.client();
    assert.ok(!(await invitee.get(`/invite?token=${token}`)).text.includes('Dana'), 'the invitee never sees it');
    // It binds nothing: any username joins, at the invitation's role.
    assert.equal((await invitee.post('/invite', { token, username: 'Frank', password: PASSWORD })).status, 303);
    const frank = await t.deps.db
      .selectFrom('accounts')
      .select('role')
      .where('username', '=', 'Frank')
      .executeTakeFirstOrThrow();
    assert.equal(frank.role, 'viewer');

    // 200 code points pass (astral characters count once each); 201 do not; control and invisible characters (a bidi
    // override that would reorder the list's text, a zero-width space) are refused.
    await mint(admin, 'viewer', '\u{1F600}'.repeat(200));
    for (const [note, message] of [
      ['n'.repeat(201), /A note is at most 200 characters/],
      ['tab\u0001bell', /cannot contain control characters/],
      ['for \u202Eanad', /cannot contain control or invisible characters/],
      ['zero\u200Bwidth', /cannot contain control or invisible characters/],
    ] as const) {
      const { post } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', { role: 'viewer', note });
      assert.equal(post.status, 400);
      assert.match(post.text, message);
      assert.match(post.text, /class="error-summary"/, 'the error is summarised at the top of the form');
    }
    assert.equal((await t.deps.db.selectFrom('invitations').select('id').execute()).length, 2);
    // Without a note the row stores NULL.
    await mint(admin, 'admin', '   ');
    const notes = await t.deps.db.selectFrom('invitations').select('note').where('role', '=', 'admin').execute();
    assert.deepEqual(notes, [{ note: null }]);
  });

  test('an invitation minted from the host command line has no author and is listed as by "command line"', async () => {
    const minted = await mintInvitation(t.deps, {
      actorId: null,
      role: 'admin',
      note: 'break glass',
      base: 'http://localhost',
    });
    assert.ok(minted.ok, 'the command line needs no confirmation');
    const row = await t.deps.db
      .selectFrom('invitations')
      .select(['created_by', 'note'])
      .where('id', '=', minted.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { created_by: null, note: 'break glass' });
    assert.match(
      (await admin.get('/settings?tab=team')).text,
      /<td><span class="cell-label">Note: <\/span>break glass<\/td>\s*<td><span class="cell-label">Created by: <\/span>command line<\/td>/,
    );
    await assert.rejects(
      mintInvitation(t.deps, { actorId: null, role: 'viewer', note: 'x'.repeat(201), base: 'http://localhost' }),
      RangeError,
    );
  });

  test('an admin invitation asks "Confirm it’s you" first; a viewer one does not; 10 minutes later it asks again', async () => {
    const count = async (role: 'admin' | 'viewer') =>
      (await t.deps.db.selectFrom('invitations').select('id').where('role', '=', role).execute()).length;
    const tab = await admin.get('/settings?tab=team');
    assert.match(tab.text, /<form method="post" action="\/settings\/accounts\/reauth" id="invite-confirm">/);
    assert.match(tab.text, /To invite an administrator, confirm it’s you below first\./);
    const inviteForm = /<form[^>]*id="invite">[\s\S]*?<\/form>/.exec(tab.text)![0];
    assert.doesNotMatch(inviteForm, /<option value="admin"/, 'the admin role is not offered yet');
    // A viewer invitation needs no confirmation.
    await mint(admin, 'viewer');
    // A post anyway (a stale page, a stolen session) mints nothing: the service refuses, the tab asks for the password.
    const { post: refused } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', {
      role: 'admin',
      note: 'sneaky',
    });
    assert.equal(refused.status, 403);
    assert.match(
      refused.text,
      /Confirm it’s you first: your last confirmation is more than 10 minutes old\. Nothing was created\./,
    );
    assert.match(refused.text, /id="invite-confirm"/);
    assert.equal(await count('admin'), 0);
    assert.ok(!t.logs.some((l) => l.includes('"role":"admin"')), 'no join link was logged');

    // A wrong password is a form error on the confirm step, counted like every re-confirmation.
    const wrong = await admin.post('/settings/accounts/reauth', { secret: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /class="error-summary"/);
    assert.match(wrong.text, /id="invite-confirm-secret-error">Incorrect password\./);
    const ok = await admin.post('/settings/accounts/reauth', { secret: TEST_PASSWORD });
    assert.equal(ok.location, '/settings?tab=team&notice=confirmed#invite');
    const confirmed = await admin.get(ok.location!);
    assert.match(confirmed.text, /Confirmed\. For the next 10 minutes you can invite administrators/);
    assert.doesNotMatch(confirmed.text, /id="invite-confirm"/);
    assert.match(/<form[^>]*id="invite">[\s\S]*?<\/form>/.exec(confirmed.text)![0], /<option value="admin"/);

    t.clock.advance(10 * 60_000 - 1);
    const { post: inTime } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', { role: 'admin' });
    assert.equal(inTime.location, REVEAL_PATH);
    assert.equal(await count('admin'), 1);
    t.clock.advance(1);
    assert.match((await admin.get('/settings?tab=team')).text, /id="invite-confirm"/, 'it asks again');
    const { post: late } = await submitMinting(admin, '/settings?tab=team', '/settings/accounts', { role: 'admin' });
    assert.equal(late.status, 403);
    assert.equal(await count('admin'), 1);
    // The confirmation belongs to the session: another session of the same admin is not confirmed by it.
    await confirmInSettings(admin, TEST_PASSWORD);
    const other = await signIn(t, adminAccount);
    assert.equal(
      (await submitMinting(other, '/settings?tab=team', '/settings/accounts', { role: 'admin' })).post.status,
      403,
    );
    assert.equal(await count('admin'), 1);
  });

  test('the service refuses an admin invitation without a recently confirmed session of the actor; the command line is exempt', async () => {
    const base = 'http://localhost';
    const sessionOf = async (accountId: string) =>
      (
        await t.deps.db
          .selectFrom('sessions')
          .select('id_hash')
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).id_hash;
    const refused = { ok: false, reason: 'reauth-required' };
    assert.deepEqual(await mintInvitation(t.deps, { actorId: adminId, role: 'admin', base }), refused);
    assert.deepEqual(
      await mintInvitation(t.deps, { actorId: adminId, sessionIdHash: await sessionOf(adminId), role: 'admin', base }),
      refused,
    );
    // Another admin's confirmed session does not vouch for this actor.
    const { account: other, client: otherClient } = await signedInAs(t, 'admin');
    await confirmInSettings(otherClient, TEST_PASSWORD);
    assert.deepEqual(
      await mintInvitation(t.deps, { actorId: adminId, sessionIdHash: await sessionOf(other.id), role: 'admin', base }),
      refused,
    );
    assert.equal((await t.deps.db.selectFrom('invitations').select('id').execute()).length, 0);
    assert.ok(
      (
        await mintInvitation(t.deps, {
          actorId: other.id,
          sessionIdHash: await sessionOf(other.id),
          role: 'admin',
          base,
        })
      ).ok,
    );
    assert.ok(
      (await mintInvitation(t.deps, { actorId: adminId, role: 'viewer', base })).ok,
      'a viewer invitation needs none',
    );
    assert.ok(
      (await mintInvitation(t.deps, { actorId: null, role: 'admin', base })).ok,
      'the host command line needs none',
    );
  });
});

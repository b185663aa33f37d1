import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { TestApp, TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, signedInAs, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { buildInvitation, buildPasskeys, passkeysOf, startAsAdmin } from '../../../test/helpers/team-factories.ts';
import { newId, systemRandom } from '../../deps.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { changeRole, reenrolSecondFactor, removeAccount } from './team.service.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), [
      'sessions',
      'recovery_codes',
      'api_tokens',
      'invitations',
      'auth_throttle',
      'passkeys',
      'accounts',
    ]));
  });

  const adminCount = async () =>
    (await t.deps.db.selectFrom('accounts').select('id').where('role', '=', 'admin').execute()).length;
  const roleOf = async (id: string) =>
    (await t.deps.db.selectFrom('accounts').select('role').where('id', '=', id).executeTakeFirst())?.role;

  test('the team tab is the default settings tab and lists every account compactly, without secrets', async () => {
    const other = await buildAccount(t, { username: 'Otto', role: 'viewer' });
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
      .where('id', '=', other.id)
      .execute();
    const res = await admin.get('/settings');
    assert.equal(res.status, 200);
    assert.match(res.text, /<a href="\/settings\?tab=team" aria-current="page">Team<\/a>/);
    const row = new RegExp(
      `<td><a href="/settings/accounts/${other.id}">Otto</a></td>\\s*<td><span class="role role-viewer">viewer</span></td>\\s*` +
        '<td>active</td>\\s*<td><span class="cell-label">Second factor: </span>TOTP</td>\\s*' +
        '<td><span class="cell-label">Last sign-in: </span><span class="empty">never</span></td>',
    );
    assert.match(res.text, row);
    assert.match(res.text, /<th scope="col">Last sign-in<\/th>/);
    assert.match(res.text, /<table class="accounts stacked">/, 'one block per account on a phone');
    assert.match(res.text, /\(you\)/);
    assert.ok(!res.text.includes('Role for Otto'), 'the acts are on the account page, not in the list');
    assert.ok(!res.text.includes('JBSWY3DPEHPK3PXP') && !res.text.includes('$argon2id$'), 'no secrets on the page');
    const page = await admin.get(`/settings/accounts/${other.id}`);
    assert.equal(page.status, 200);
    // A viewer's role can only be raised, which asks "Confirm it's you" first; an admin's is a plain choice.
    assert.match(page.text, /<form method="post" action="\/settings\/accounts\/reauth" id="account-role-confirm">/);
    assert.ok(!page.text.includes('Role for Otto'));
    const otherAdmin = await buildAccount(t, { username: 'Ada', role: 'admin' });
    assert.match(
      (await admin.get(`/settings/accounts/${otherAdmin.id}`)).text,
      /<label for="account-role-role">Role for Ada<\/label>/,
    );
    assert.ok(
      !page.text.includes('JBSWY3DPEHPK3PXP') && !page.text.includes('$argon2id$'),
      'no secrets on the account page',
    );
    assert.equal((await admin.get('/settings?tab=team')).status, 200);
  });

  test('the team list and the account page say which second factors an account has, in one wording', async () => {
    const both = await buildAccount(t, { username: 'Bea' });
    await t.deps.db.updateTable('accounts').set({ totp_enabled: 1 }).where('id', '=', both.id).execute();
    const keys = await buildPasskeys(t, both.id, 2);
    const one = await buildAccount(t, { username: 'Kai' });
    await buildPasskeys(t, one.id, 1);
    const cell = (name: string, factors: string) =>
      new RegExp(
        `>${name}</a></td>\\s*<td>.*?</td>\\s*<td>active</td>\\s*<td><span class="cell-label">Second factor: </span>${factors}</td>`,
      );
    const list = await admin.get('/settings?tab=team');
    assert.match(list.text, cell('Bea', 'TOTP, 2 passkeys'));
    assert.match(list.text, cell('Kai', '1 passkey'));
    assert.match(
      list.text,
      /\(you\)<\/span><\/td>\s*<td>.*?<\/td>\s*<td>active<\/td>\s*<td><span class="cell-label">Second factor: <\/span><span class="empty">None<\/span><\/td>/,
    );
    const page = await admin.get(`/settings/accounts/${both.id}`);
    assert.match(page.text, /<dt>Second factor<\/dt>\s*<dd>TOTP, 2 passkeys<\/dd>/);
    assert.match(
      page.text,
      /Reset second factor…<\/a><span class="hint">Clears the authenticator, every passkey and the recovery codes\./,
    );
    const kaiPage = await admin.get(`/settings/accounts/${one.id}`);
    assert.match(kaiPage.text, /<dt>Second factor<\/dt>\s*<dd>1 passkey<\/dd>/);
    assert.match(
      kaiPage.text,
      /href="\/settings\/accounts\/[^"]+\?confirm=reenroll">Reset second factor…/,
      'a passkey alone is a second factor to reset',
    );
    const confirm = await admin.get(`/settings/accounts/${both.id}?confirm=reenroll`);
    assert.match(
      confirm.text,
      /This removes the authenticator \(TOTP\) and the 2 passkeys of Bea and voids its recovery codes; it enrols again at its next sign-in\./,
    );
    for (const text of [list.text, page.text, confirm.text])
      for (const key of keys) assert.ok(!text.includes(key.credential_id) && !text.includes(key.public_key), 'no key');
  });

  test('a viewer gets 403 on the team tab and on every team act', async () => {
    const { client: viewer } = await signedInAs(t, 'viewer');
    assert.equal((await viewer.get('/settings?tab=team')).status, 403);
    assert.equal((await viewer.get(`/settings/accounts/${adminId}`)).status, 403);
    const acts = ['role', 'reenroll', 'remove', 'suspend', 'reactivate', 'sign-out', 'reset-link', 'reassign'];
    for (const act of acts) {
      const res = await viewer.post(`/settings/accounts/${act}`, {
        account: adminId,
        role: 'viewer',
        confirm: 'x',
        to: adminId,
      });
      assert.equal(res.status, 403, act);
    }
    assert.equal(await roleOf(adminId), 'admin');
    const admins = await t.deps.db
      .selectFrom('accounts')
      .select(['suspended_at'])
      .where('id', '=', adminId)
      .executeTakeFirstOrThrow();
    assert.equal(admins.suspended_at, null);
    assert.equal((await t.deps.db.selectFrom('password_resets').select('account_id').execute()).length, 0);
  });

  test('a promotion asks "Confirm it’s you" first, then applies on the next request; a demotion needs none', async () => {
    const { account: vic, client: viewer } = await signedInAs(t, 'viewer');
    assert.equal((await viewer.get('/settings')).status, 403);
    // A stolen admin session alone cannot make another administrator (an old page's form, or a forged post).
    const unconfirmed = await admin.post('/settings/accounts/role', { account: vic.id, role: 'admin' });
    assert.equal(unconfirmed.status, 403);
    assert.match(
      unconfirmed.text,
      /Confirm it’s you first: your last confirmation is more than 10 minutes old\. The role was not changed\./,
    );
    assert.match(unconfirmed.text, /id="account-role-confirm"/);
    assert.equal(await roleOf(vic.id), 'viewer');
    const wrong = await admin.post('/settings/accounts/reauth', {
      secret: 'not the password',
      account: vic.id,
      at: 'role',
    });
    assert.equal(wrong.status, 401);
    assert.match(
      wrong.text,
      /<form method="post" action="\/settings\/accounts\/reauth" id="account-role-confirm">[\s\S]*?Incorrect password/,
      'the error at the form used',
    );
    const confirmed = await admin.post('/settings/accounts/reauth', {
      secret: TEST_PASSWORD,
      account: vic.id,
      at: 'role',
    });
    assert.equal(confirmed.location, `/settings/accounts/${vic.id}?notice=confirmed-role#account-role`);
    const back = await admin.get(confirmed.location!.replace(/#.*/, ''));
    assert.match(
      back.text,
      /<h3>Role<\/h3><div class="notice success"[^>]*>Confirmed\./,
      'the notice at the Role section',
    );
    assert.match(back.text, /<label for="account-role-role">Role for /);
    const res = await admin.post('/settings/accounts/role', { account: vic.id, role: 'admin' });
    assert.equal(res.status, 303);
    assert.equal(res.location, `/settings/accounts/${vic.id}?notice=role-changed`);
    assert.match((await admin.get(res.location!)).text, /Role changed/);
    assert.equal((await viewer.get('/settings')).status, 200);
    assert.equal(
      (await admin.post('/settings/accounts/role', { account: vic.id, role: 'admin' })).location,
      `/settings/accounts/${vic.id}?notice=role-unchanged`,
    );
    assert.equal((await admin.post('/settings/accounts/role', { account: vic.id, role: 'viewer' })).status, 303);
    assert.equal((await viewer.get('/settings')).status, 403);
  });

  test('making an administrator needs a confirmed session or a writing token of the actor; a demotion and the command line need none', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const refused = { ok: false, reason: 'reauth-required' };
    const tokenOf = async (accountId: string, readOnly = false) =>
      (await createToken(t.deps, accountId, { name: `t-${newId(systemRandom)}`, expiry: 'never', readOnly })).id;
    const [readOnly, foreign, own] = [await tokenOf(adminId, true), await tokenOf(vera.id), await tokenOf(adminId)];
    for (const tokenId of [readOnly, foreign, 'no-such-token']) {
      assert.deepEqual(
        await changeRole(t.deps, { actorId: adminId, via: 'token', tokenId, targetId: vera.id, role: 'admin' }),
        refused,
        tokenId,
      );
    }
    assert.deepEqual(
      await changeRole(t.deps, { actorId: adminId, targetId: vera.id, role: 'admin' }),
      refused,
      'no credential named',
    );
    assert.equal(await roleOf(vera.id), 'viewer');
    assert.deepEqual(
      await changeRole(t.deps, { actorId: adminId, via: 'token', tokenId: own, targetId: vera.id, role: 'admin' }),
      { ok: true, username: 'vera', changed: true },
    );
    assert.deepEqual(
      await changeRole(t.deps, { actorId: adminId, targetId: vera.id, role: 'admin' }),
      { ok: true, username: 'vera', changed: false },
      'no change needs nothing',
    );
    assert.equal(
      (await changeRole(t.deps, { actorId: adminId, targetId: vera.id, role: 'viewer' })).ok,
      true,
      'a demotion',
    );
    assert.equal(
      (await changeRole(t.deps, { actorId: null, targetId: vera.id, role: 'admin' })).ok,
      true,
      'the command line',
    );
  });

  test('changing one’s own role is refused; bad forms are clear errors', async () => {
    await buildAccount(t, { role: 'admin' });
    const self = await admin.post('/settings/accounts/role', { account: adminId, role: 'viewer' });
    assert.equal(self.status, 409);
    assert.match(self.text, /You cannot change your own role/);
    assert.equal(await roleOf(adminId), 'admin');
    const cases: [Record<string, string>, number, RegExp][] = [
      [{ role: 'viewer' }, 400, /Choose an account/],
      [{ account: adminId, role: 'owner' }, 400, /Choose the role admin or viewer/],
      [{ account: 'no-such-account', role: 'viewer' }, 404, /no longer exists/],
    ];
    for (const [fields, status, message] of cases) {
      const res = await admin.post('/settings/accounts/role', fields);
      assert.equal(res.status, status, JSON.stringify(fields));
      assert.match(res.text, message);
    }
  });

  test('two admins demoting each other at once: exactly one succeeds, one admin remains', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await buildAccount(t, { role: 'admin' });
      const b = await buildAccount(t, { role: 'admin' });
      await t.deps.db.updateTable('accounts').set({ role: 'viewer' }).where('id', 'not in', [a.id, b.id]).execute();
      const results = await Promise.all([
        changeRole(t.deps, { actorId: a.id, targetId: b.id, role: 'viewer' }),
        changeRole(t.deps, { actorId: b.id, targetId: a.id, role: 'viewer' }),
      ]);
      assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
      assert.deepEqual(
        results.find((r) => !r.ok),
        { ok: false, reason: 'last-admin' },
      );
      assert.equal(await adminCount(), 1);
    }
  });

  test('the same race through HTTP leaves one admin and shows "promote another account first"', async () => {
    const other = await buildAccount(t, { role: 'admin' });
    const otherClient = await signIn(t, other);
    const [first, second] = await Promise.all([
      admin.post('/settings/accounts/role', { account: other.id, role: 'viewer' }),
      otherClient.post('/settings/accounts/role', { account: adminId, role: 'viewer' }),
    ]);
    const statuses = [first!.status, second!.status].sort();
    assert.equal(statuses[0], 303);
    // The loser is refused by the guard (409) or, if the winner committed before it was let in, by the gate (403).
    assert.ok([403, 409].includes(statuses[1]!), String(statuses));
    const refused = first!.status === 303 ? second! : first!;
    if (refused.status === 409) assert.match(refused.text, /Promote another account first/);
    assert.equal(await adminCount(), 1);
  });

  test('re-enrolment clears TOTP, every passkey and the recovery codes, keeps password and sessions', async () => {
    const target = await buildAccount(t, { role: 'viewer' });
    const targetClient = await signIn(t, target);
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1, totp_last_step: 123, totp_enrol_prompt: 0 })
      .where('id', '=', target.id)
      .execute();
    const now = t.clock.now();
    await t.deps.db
      .insertInto('recovery_codes')
      .values(
        [1, 2].map((n) => ({
          id: newId(systemRandom),
          account_id: target.id,
          code_hash: `hash-${n}`,
          used_at: null,
          created_at: now,
        })),
      )
      .execute();
    const before = await t.deps.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', target.id)
      .executeTakeFirstOrThrow();

    await buildPasskeys(t, target.id, 2);
    const other = await buildAccount(t, { role: 'viewer' });
    await buildPasskeys(t, other.id, 1);

    const res = await admin.post('/settings/accounts/reenroll', { account: target.id });
    assert.equal(res.location, `/settings/accounts/${target.id}?notice=reenrolled`);
    assert.equal(await passkeysOf(t, target.id), 0, 'every passkey of the account is gone');
    assert.equal(await passkeysOf(t, other.id), 1, 'another account’s stay');
    assert.ok(
      t.logs.some((l) => /"event":"second-factor-reset".*"cleared":\{"totp":true,"passkeys":2\}/.test(l)),
      'the log line says what went',
    );
    const after = await t.deps.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', target.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [after.totp_secret, after.totp_enabled, after.totp_last_step, after.totp_enrol_prompt],
      [null, 0, null, 1],
    );
    assert.equal(after.password_hash, before.password_hash);
    assert.equal(after.role, 'viewer');
    assert.equal(
      (await t.deps.db.selectFrom('recovery_codes').select('id').where('account_id', '=', target.id).execute()).length,
      0,
    );
    assert.equal((await targetClient.get('/')).status, 200, 'the account’s session still works');
    const page = await admin.get(res.location!);
    assert.match(page.text, /Second factor cleared/);
    assert.match(page.text, /<dt>Second factor<\/dt>\s*<dd>None<\/dd>/);
    assert.match(page.text, /No second factor: nothing to reset\./);
    assert.equal((await admin.post('/settings/accounts/reenroll', { account: 'gone' })).status, 404);
  });

  test('an admin cannot reset its own second factor from the team pages (Profile asks "Confirm it’s you"); the CLI can', async () => {
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
      .where('id', '=', adminId)
      .execute();
    const now = t.clock.now();
    await t.deps.db
      .insertInto('recovery_codes')
      .values({ id: newId(systemRandom), account_id: adminId, code_hash: 'hash', used_at: null, created_at: now })
      .execute();
    await buildPasskeys(t, adminId, 1);
    const res = await admin.post('/settings/accounts/reenroll', { account: adminId });
    assert.equal(res.status, 409);
    assert.equal(await passkeysOf(t, adminId), 1, 'its passkey stays');
    assert.match(res.text, /You cannot reset your own second factor\. Another administrator can\./);
    const row = await t.deps.db
      .selectFrom('accounts')
      .select(['totp_secret', 'totp_enabled'])
      .where('id', '=', adminId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 }, 'nothing was cleared');
    assert.equal(
      (await t.deps.db.selectFrom('recovery_codes').select('id').where('account_id', '=', adminId).execute()).length,
      1,
    );
    assert.deepEqual(await reenrolSecondFactor(t.deps, { actorId: adminId, targetId: adminId }), {
      ok: false,
      reason: 'self',
    });
    assert.deepEqual(
      await reenrolSecondFactor(t.deps, { actorId: null, targetId: adminId }),
      {
        ok: true,
        username: (
          await t.deps.db.selectFrom('accounts').select('username').where('id', '=', adminId).executeTakeFirstOrThrow()
        ).username,
        cleared: { totp: true, passkeys: 1 },
      },
      'the host CLI has no self-rule',
    );
    assert.equal(await passkeysOf(t, adminId), 0);
  });

  test('removal needs the exact username; never oneself', async () => {
    const target = await buildAccount(t, { username: 'Rita', role: 'viewer' });
    for (const confirm of ['', 'rita', 'Rita ', ' Rita', 'RITA']) {
      const res = await admin.post('/settings/accounts/remove', { account: target.id, confirm });
      assert.equal(res.status, 400, JSON.stringify(confirm));
      assert.match(res.text, /did not match the username exactly/);
    }
    assert.equal(await roleOf(target.id), 'viewer', 'still there');
    const self = await admin.post('/settings/accounts/remove', {
      account: adminId,
      confirm: (
        await t.deps.db.selectFrom('accounts').select('username').where('id', '=', adminId).executeTakeFirstOrThrow()
      ).username,
    });
    assert.equal(self.status, 409);
    assert.match(self.text, /cannot remove your own account/);
    assert.equal(await roleOf(adminId), 'admin');
    assert.equal((await admin.post('/settings/accounts/remove', { account: 'gone', confirm: 'gone' })).status, 404);
  });

  test('a removed account’s sessions and API tokens stop working at once', async () => {
    const target = await buildAccount(t, { username: 'Gone Soon', role: 'admin' });
    const targetClient = await signIn(t, target);
    const now = t.clock.now();
    await t.deps.db
      .insertInto('api_tokens')
      .values({
        id: newId(systemRandom),
        account_id: target.id,
        name: 'ci',
        token_hash: 'h'.repeat(64),
        created_at: now,
        expires_at: null,
        last_used_at: null,
        read_only: 0,
      })
      .execute();
    assert.equal((await targetClient.get('/settings')).status, 200);

    const res = await admin.post('/settings/accounts/remove', { account: target.id, confirm: 'Gone Soon' });
    assert.equal(res.location, '/settings?tab=team&notice=removed');
    assert.equal(await roleOf(target.id), undefined);
    for (const table of ['sessions', 'api_tokens'] as const) {
      assert.equal(
        (await t.deps.db.selectFrom(table).select('account_id').where('account_id', '=', target.id).execute()).length,
        0,
        table,
      );
    }
    const next = await targetClient.get('/settings');
    assert.equal(next.status, 303);
    assert.equal(next.location, '/login');
  });

  test('an author of rows is refused by the database and told to demote instead', async () => {
    const author = await buildAccount(t, { username: 'Author', role: 'admin' });
    const authorClient = await signIn(t, author);
    await buildInvitation(t, author.id);

    const res = await admin.post('/settings/accounts/remove', { account: author.id, confirm: 'Author' });
    assert.equal(res.status, 409);
    assert.match(res.text, /Author authored records/);
    assert.match(res.text, /Reassign those records to another account, or keep the account and demote it to viewer/);
    assert.match(
      res.text,
      /<label for="[^"]+">Move its authored records to<\/label>/,
      'the refusal offers the reassignment',
    );
    assert.equal(await roleOf(author.id), 'admin');
    assert.equal((await authorClient.get('/settings')).status, 200, 'nothing was deleted, sessions included');
    assert.equal((await admin.post('/settings/accounts/role', { account: author.id, role: 'viewer' })).status, 303);
    assert.equal((await authorClient.get('/settings')).status, 403);
  });

  test('two admins removing each other at once: exactly one is removed, one admin remains', async () => {
    const a = await buildAccount(t, { username: 'ann', role: 'admin' });
    const b = await buildAccount(t, { username: 'bob', role: 'admin' });
    await t.deps.db.updateTable('accounts').set({ role: 'viewer' }).where('id', '=', adminId).execute();
    const results = await Promise.all([
      removeAccount(t.deps, { actorId: a.id, targetId: b.id, confirmation: 'bob' }),
      removeAccount(t.deps, { actorId: b.id, targetId: a.id, confirmation: 'ann' }),
    ]);
    assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
    assert.deepEqual(
      results.find((r) => !r.ok),
      { ok: false, reason: 'last-admin' },
    );
    assert.equal(await adminCount(), 1);
  });
});

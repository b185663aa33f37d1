// Suspension and reactivation, sign out everywhere, reassigning authored records, the account page.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { sql } from 'kysely';
import type { TestApp, TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn, TEST_PASSWORD } from '../../../test/helpers/factories.ts';
import { confirmInSettings } from '../../../test/helpers/once.ts';
import { buildChannel } from '../../../test/helpers/outbox.ts';
import { buildInvitation, startAsAdmin } from '../../../test/helpers/team-factories.ts';
import { newId, systemRandom } from '../../deps.ts';
import { createToken } from '../tokens/tokens.service.ts';
import { AUTHORED_TABLES } from './team.repo.ts';
import { changeRole, reassignAuthored, removeAccount, suspendAccount } from './team.service.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  let admin: TestClient;
  let adminId: string;
  beforeEach(async () => {
    ({ t, admin, adminId } = await startAsAdmin(getDb(), [
      'sessions',
      'api_tokens',
      'invitations',
      'channels',
      'sso_providers',
      'password_resets',
      'auth_throttle',
      'accounts',
    ]));
  });

  const accountRow = (id: string) =>
    t.deps.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  const sessionsOf = async (id: string) =>
    (await t.deps.db.selectFrom('sessions').select('stage').where('account_id', '=', id).execute()).map((r) => r.stage);
  const me = (token: string) => t.client().get('/api/me', { authorization: `Bearer ${token}` });
  const login = async (who: { username: string }, password: string) => {
    const c = t.client();
    await c.get('/login');
    return c.post('/login', { username: who.username, password });
  };
  const activeAdmins = async () =>
    (
      await t.deps.db
        .selectFrom('accounts')
        .select('id')
        .where('role', '=', 'admin')
        .where('suspended_at', 'is', null)
        .execute()
    ).length;

  test('suspending ends sessions and pending sign-ins at once, refuses every way in, and reactivation restores access', async () => {
    const vera = await buildAccount(t, { username: 'vera', role: 'viewer' });
    const veraClient = await signIn(t, vera);
    const pending = await buildAccount(t, { username: 'penny', enrolPrompt: true });
    const pendingClient = t.client();
    await pendingClient.get('/login');
    assert.equal(
      (await pendingClient.post('/login', { username: 'penny', password: TEST_PASSWORD })).location,
      '/login/enrol',
    );
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    assert.equal((await me(token)).status, 200);

    // The first step only asks; nothing changes until its button is pressed.
    const step = await admin.get(`/settings/accounts/${vera.id}?confirm=suspend`);
    assert.equal(step.status, 200);
    assert.match(step.text, /<button type="submit" class="danger">Suspend vera<\/button>/);
    assert.doesNotMatch(step.text, /nobody has accepted yet stay valid/, 'no invitations, no warning');
    assert.equal((await accountRow(vera.id))?.suspended_at, null);
    // Invitations it created outlive the suspension: the step says how many still work and where to revoke them.
    await buildInvitation(t, vera.id);
    const spent = await buildInvitation(t, vera.id);
    await buildInvitation(t, vera.id);
    await t.deps.db.updateTable('invitations').set({ spent_at: t.clock.now() }).where('id', '=', spent).execute();
    assert.match(
      (await admin.get(`/settings/accounts/${vera.id}?confirm=suspend`)).text,
      /The 2 invitations that vera created and nobody has accepted yet stay valid: revoke them on the <a href="\/settings\?tab=team">Team tab<\/a>/,
    );

    const res = await admin.post('/settings/accounts/suspend', { account: vera.id });
    assert.equal(res.status, 303);
    assert.equal(res.location, `/settings/accounts/${vera.id}?notice=suspended`);
    assert.match((await admin.get(res.location!)).text, /Account suspended\. Its sessions ended/);
    assert.equal((await accountRow(vera.id))?.suspended_at, t.clock.now());
    assert.deepEqual(await sessionsOf(vera.id), []);
    assert.equal((await veraClient.get('/')).location, '/login', 'the signed-in browser is out');
    assert.match(
      (await admin.get('/settings?tab=team')).text,
      new RegExp(
        `${vera.id}">vera</a></td>\\s*<td><span class="role role-viewer">viewer</span></td>\\s*<td><span class="badge state-suspended">suspended</span>`,
      ),
    );

    // A pending sign-in of another suspended account ends too (its enrolment secret with it).
    assert.deepEqual(await sessionsOf(pending.id), ['enrol']);
    assert.equal((await admin.post('/settings/accounts/suspend', { account: pending.id })).status, 303);
    assert.deepEqual(await sessionsOf(pending.id), []);
    assert.equal((await pendingClient.get('/login/enrol')).location, '/login');

    // Password: the right one is told plainly; a wrong one gets the usual answer, so suspension is no oracle.
    const right = await login(vera, TEST_PASSWORD);
    assert.equal(right.status, 403);
    assert.match(
      right.text,
      /This account is suspended, so it cannot sign in\. Ask an administrator to reactivate it\./,
    );
    assert.deepEqual(await sessionsOf(vera.id), [], 'no session was created');
    const wrong = await login(vera, 'not the password at all');
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /Incorrect username or password\./);
    assert.doesNotMatch(wrong.text, /suspended/);

    // API token: refused while suspended, kept, and working again after reactivation.
    assert.equal((await me(token)).status, 401);
    assert.equal(
      (await t.deps.db.selectFrom('api_tokens').select('id').where('account_id', '=', vera.id).execute()).length,
      1,
    );
    assert.equal(
      (await admin.post('/settings/accounts/suspend', { account: vera.id })).location,
      `/settings/accounts/${vera.id}?notice=already-suspended`,
    );

    const back = await admin.post('/settings/accounts/reactivate', { account: vera.id });
    assert.equal(back.location, `/settings/accounts/${vera.id}?notice=reactivated`);
    assert.match((await admin.get(back.location!)).text, /Account reactivated/);
    assert.equal((await accountRow(vera.id))?.suspended_at, null);
    assert.equal((await me(token)).status, 200);
    assert.equal((await login(vera, TEST_PASSWORD)).location, '/');
    assert.equal(
      (await admin.post('/settings/accounts/reactivate', { account: vera.id })).location,
      `/settings/accounts/${vera.id}?notice=already-active`,
    );
  });

  test('a session row that survived suspension is refused on its next request and deleted', async () => {
    const vera = await buildAccount(t, { role: 'admin' });
    const veraClient = await signIn(t, vera);
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', vera.id).execute();
    assert.deepEqual(await sessionsOf(vera.id), ['full']);
    const res = await veraClient.get('/settings');
    assert.equal(res.status, 303);
    assert.equal(res.location, '/login');
    assert.deepEqual(await sessionsOf(vera.id), []);
  });

  test('suspending oneself or the last active admin is refused; demotion and removal count active admins only', async () => {
    const self = await admin.post('/settings/accounts/suspend', { account: adminId });
    assert.equal(self.status, 409);
    assert.match(self.text, /You cannot suspend your own account\./);

    const other = await buildAccount(t, { username: 'otto', role: 'admin' });
    assert.equal((await admin.post('/settings/accounts/suspend', { account: other.id })).status, 303);
    // The host CLI (no actor) has no self-rule, but the guard holds: the signed-in admin is the last active one.
    assert.deepEqual(await suspendAccount(t.deps, { actorId: null, accountId: adminId }), {
      ok: false,
      reason: 'last-admin',
    });
    assert.deepEqual(await changeRole(t.deps, { actorId: null, targetId: adminId, role: 'viewer' }), {
      ok: false,
      reason: 'last-admin',
    });
    const name = (await accountRow(adminId))!.username;
    assert.deepEqual(await removeAccount(t.deps, { actorId: null, targetId: adminId, confirmation: name }), {
      ok: false,
      reason: 'last-admin',
    });
    assert.equal(await activeAdmins(), 1);

    // A suspended admin acting (a session that raced its suspension) is no admin.
    const viewer = await buildAccount(t);
    assert.deepEqual(await suspendAccount(t.deps, { actorId: other.id, accountId: viewer.id }), {
      ok: false,
      reason: 'not-admin',
    });
    // Demoting a suspended admin is fine while an active one remains.
    assert.equal((await admin.post('/settings/accounts/role', { account: other.id, role: 'viewer' })).status, 303);
  });

  test('the same race through HTTP leaves one active admin; a refused loser reads "last active administrator"', async () => {
    const other = await buildAccount(t, { role: 'admin' });
    const otherClient = await signIn(t, other);
    const [first, second] = await Promise.all([
      admin.post('/settings/accounts/suspend', { account: other.id }),
      otherClient.post('/settings/accounts/suspend', { account: adminId }),
    ]);
    const won = [first!, second!].filter((r) => r.status === 303 && r.location?.endsWith('notice=suspended'));
    assert.equal(won.length, 1, `${first!.status} ${first!.location} / ${second!.status} ${second!.location}`);
    const lost = won[0] === first ? second! : first!;
    // Refused by the guard (409), or, when the winner committed first, sent to sign in (its session ended).
    if (lost.status === 409)
      assert.match(lost.text, /That is the last active administrator\. Promote another account first\./);
    else assert.equal(lost.location, '/login');
    assert.equal(await activeAdmins(), 1);
  });

  // Two admins, each acting on the other at once: exactly one act succeeds, and one active admin remains.
  const races: [string, (a: string, b: string) => Promise<{ ok: boolean }>[]][] = [
    [
      'suspending each other',
      (a, b) => [
        suspendAccount(t.deps, { actorId: a, accountId: b }),
        suspendAccount(t.deps, { actorId: b, accountId: a }),
      ],
    ],
    [
      'one suspends, the other demotes',
      (a, b) => [
        suspendAccount(t.deps, { actorId: a, accountId: b }),
        changeRole(t.deps, { actorId: b, targetId: a, role: 'viewer' }),
      ],
    ],
  ];
  for (const [name, race] of races) {
    test(`two admins ${name} at once: exactly one succeeds, one active admin remains`, async () => {
      for (let round = 0; round < 3; round++) {
        const a = await buildAccount(t, { role: 'admin' });
        const b = await buildAccount(t, { role: 'admin' });
        await t.deps.db.updateTable('accounts').set({ role: 'viewer' }).where('id', 'not in', [a.id, b.id]).execute();
        const results = await Promise.all(race(a.id, b.id));
        assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
        assert.equal(await activeAdmins(), 1);
      }
    });
  }

  test('sign out everywhere ends every session of the account, keeps its tokens, and is not for oneself', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const one = await signIn(t, vera);
    const two = await signIn(t, vera);
    const { token } = await createToken(t.deps, vera.id, { name: 'ci', expiry: 'never' });
    const step = await admin.get(`/settings/accounts/${vera.id}?confirm=sign-out`);
    assert.match(step.text, /Its API tokens keep working unless you tick the box below\./);
    assert.match(step.text, /<button type="submit">Sign vera out everywhere<\/button>/);
    assert.deepEqual(await sessionsOf(vera.id), ['full', 'full']);

    const res = await admin.post('/settings/accounts/sign-out', { account: vera.id });
    assert.equal(res.location, `/settings/accounts/${vera.id}?notice=signed-out`);
    assert.match(
      (await admin.get(res.location!)).text,
      /every session of this account ended\. Its API tokens are untouched and still work\./,
    );
    assert.deepEqual(await sessionsOf(vera.id), []);
    for (const c of [one, two]) assert.equal((await c.get('/')).location, '/login');
    assert.equal((await me(token)).status, 200, 'tokens untouched');
    assert.equal((await login(vera, TEST_PASSWORD)).location, '/', 'the account signs in again as usual');

    const self = await admin.post('/settings/accounts/sign-out', { account: adminId });
    assert.equal(self.status, 409);
    assert.match(self.text, /use the Sessions section of your Profile/);
    assert.equal((await admin.get('/')).status, 200, 'the admin’s own session is kept');
    assert.equal((await admin.post('/settings/accounts/sign-out', { account: 'gone' })).status, 404);
  });

  test('authored records move to another active account in one step, after which removal works', async () => {
    const author = await buildAccount(t, { username: 'Author', role: 'admin' });
    const heir = await buildAccount(t, { username: 'Heir' });
    const idle = await buildAccount(t, { username: 'Idle' });
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', idle.id).execute();
    await buildInvitation(t, author.id);
    await buildChannel(t, { createdBy: author.id });
    await t.deps.db
      .insertInto('sso_providers')
      .values({
        id: newId(systemRandom),
        display_name: 'IdP',
        slug: 'idp',
        issuer: 'https://idp.example',
        client_id: 'c',
        client_secret: null,
        enabled: 1,
        created_at: 0,
        updated_at: 0,
        created_by: author.id,
      })
      .execute();

    const page = await admin.get(`/settings/accounts/${author.id}`);
    assert.match(page.text, /<dt>Authored records<\/dt>\s*<dd>3 records/);
    assert.match(page.text, new RegExp(`<option value="${heir.id}">Heir</option>`));
    assert.doesNotMatch(page.text, new RegExp(`<option value="${idle.id}">`), 'a suspended account is not offered');
    assert.equal(
      (await admin.post('/settings/accounts/remove', { account: author.id, confirm: 'Author' })).status,
      409,
    );

    const step = await admin.get(`/settings/accounts/${author.id}?confirm=reassign&to=${heir.id}`);
    assert.match(step.text, /All 3 records that Author authored/);
    assert.match(step.text, /<button type="submit">Move records to Heir<\/button>/);
    const nothingYet = await t.deps.db.selectFrom('channels').select('created_by').executeTakeFirstOrThrow();
    assert.equal(nothingYet.created_by, author.id);

    assert.equal((await admin.post('/settings/accounts/reassign', { account: author.id, to: idle.id })).status, 409);
    assert.match(
      (await admin.post('/settings/accounts/reassign', { account: author.id, to: author.id })).text,
      /Choose another account to receive the records/,
    );
    assert.equal((await admin.post('/settings/accounts/reassign', { account: author.id, to: 'gone' })).status, 409);
    assert.equal((await admin.post('/settings/accounts/reassign', { account: 'gone', to: heir.id })).status, 404);
    assert.equal((await admin.post('/settings/accounts/reassign', { account: author.id })).status, 400);

    const res = await admin.post('/settings/accounts/reassign', { account: author.id, to: heir.id });
    assert.equal(res.location, `/settings/accounts/${author.id}?notice=reassigned`);
    for (const table of AUTHORED_TABLES) {
      const authors = await t.deps.db.selectFrom(table).select('created_by').execute();
      assert.deepEqual(
        authors.map((r) => r.created_by),
        [heir.id],
        table,
      );
    }
    assert.match((await admin.get(res.location!)).text, /<dt>Authored records<\/dt>\s*<dd>none<\/dd>/);
    assert.equal(
      (await admin.post('/settings/accounts/reassign', { account: author.id, to: heir.id })).location,
      `/settings/accounts/${author.id}?notice=nothing-to-reassign`,
    );
    const removed = await admin.post('/settings/accounts/remove', { account: author.id, confirm: 'Author' });
    assert.equal(removed.location, '/settings?tab=team&notice=removed');
    assert.equal(await accountRow(author.id), undefined);
  });

  test('a move racing the suspension of the receiving account never lands on a suspended account', async () => {
    for (let round = 0; round < 3; round++) {
      const author = await buildAccount(t);
      const heir = await buildAccount(t);
      await buildInvitation(t, author.id);
      const [moved] = await Promise.all([
        reassignAuthored(t.deps, { actorId: adminId, fromId: author.id, toId: heir.id }),
        suspendAccount(t.deps, { actorId: adminId, accountId: heir.id }),
      ]);
      const invitation = await t.deps.db
        .selectFrom('invitations')
        .select('created_by')
        .where('created_by', 'in', [author.id, heir.id])
        .executeTakeFirstOrThrow();
      assert.equal(invitation.created_by, moved.ok ? heir.id : author.id);
      if (!moved.ok) assert.equal(moved.reason, 'heir-suspended');
    }
  });

  test('AUTHORED_TABLES names every non-cascading foreign key to accounts (a new created_by table must be reassignable)', async () => {
    const tdb = getDb();
    let keys: { table: string; column: string }[];
    if (tdb.dialect === 'sqlite') {
      const tables = await sql<{
        name: string;
      }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(tdb.db);
      keys = [];
      for (const { name } of tables.rows) {
        const fks = await sql<{
          table: string;
          from: string;
          on_delete: string;
        }>`select * from pragma_foreign_key_list(${name})`.execute(tdb.db);
        for (const fk of fks.rows)
          if (fk.table === 'accounts' && fk.on_delete !== 'CASCADE') keys.push({ table: name, column: fk.from });
      }
    } else {
      const rows = await sql<{ table: string; column: string }>`
        select c.conrelid::regclass::text as table, a.attname as column
        from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any(c.conkey)
        where c.contype = 'f' and c.confrelid = 'accounts'::regclass and c.confdeltype <> 'c'`.execute(tdb.db);
      keys = rows.rows;
    }
    assert.deepEqual(
      keys.map((k) => `${k.table}.${k.column}`).sort(),
      AUTHORED_TABLES.map((table) => `${table}.created_by`).sort(),
    );
  });

  test('the account page: facts, one link per act, confirmation steps only by GET, 404 for unknown ids', async () => {
    const vera = await buildAccount(t, { username: 'vera' });
    const before = await admin.get(`/settings/accounts/${vera.id}`);
    assert.match(before.text, /<dt>Last sign-in<\/dt>\s*<dd>never<\/dd>/);
    t.clock.advance(60_000);
    await signIn(t, vera);
    assert.equal((await accountRow(vera.id))?.last_sign_in_at, t.clock.now(), 'a full sign-in is recorded');
    const page = await admin.get(`/settings/accounts/${vera.id}`);
    for (const label of ['Suspend…', 'Sign out everywhere…']) assert.ok(page.text.includes(`>${label}</a>`), label);
    // A second factor is offered for reset only when there is one.
    assert.ok(!page.text.includes('Reset second factor…') && page.text.includes('No second factor: nothing to reset.'));
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: 'JBSWY3DPEHPK3PXP', totp_enabled: 1 })
      .where('id', '=', vera.id)
      .execute();
    assert.ok((await admin.get(`/settings/accounts/${vera.id}`)).text.includes('>Reset second factor…</a>'));
    for (const button of ['Confirm', 'Remove account']) assert.ok(page.text.includes(`>${button}</button>`), button);
    // Raising a viewer's role and a reset link wait for "Confirm it's you" (team.test.ts, reset.test.ts); after it,
    // the page offers their buttons.
    await confirmInSettings(admin, TEST_PASSWORD, vera.id);
    const confirmed = (await admin.get(`/settings/accounts/${vera.id}`)).text;
    for (const button of ['Save role', 'Create reset link'])
      assert.ok(confirmed.includes(`>${button}</button>`), button);
    assert.doesNotMatch(page.text, /id="confirm"/);
    // An unknown confirm value or a move to an account that cannot receive shows no step.
    assert.doesNotMatch(
      (await admin.get(`/settings/accounts/${vera.id}?confirm=delete-everything`)).text,
      /id="confirm"/,
    );
    assert.doesNotMatch(
      (await admin.get(`/settings/accounts/${vera.id}?confirm=reassign&to=${vera.id}`)).text,
      /id="confirm"/,
    );
    // One's own page offers no acts, only where they live.
    const own = await admin.get(`/settings/accounts/${adminId}`);
    assert.match(own.text, /This is your own account/);
    assert.doesNotMatch(own.text, /Suspend…|Remove account/);
    assert.doesNotMatch((await admin.get(`/settings/accounts/${adminId}?confirm=suspend`)).text, /id="confirm"/);
    for (const path of ['/settings/accounts/no-such-account', '/settings/accounts/bad%20id']) {
      const res = await admin.get(path);
      assert.equal(res.status, 404, path);
      assert.match(res.text, /That account no longer exists/);
    }
  });

  test('a pending sign-in is recorded as a sign-in only once its second step is passed', async () => {
    const penny = await buildAccount(t, { username: 'penny', enrolPrompt: true });
    const c = t.client();
    await c.get('/login');
    assert.equal((await c.post('/login', { username: 'penny', password: TEST_PASSWORD })).location, '/login/enrol');
    assert.equal((await accountRow(penny.id))?.last_sign_in_at, null);
    await c.get('/login/enrol');
    t.clock.advance(1_000);
    const skipped = await c.post('/login/enrol', { action: 'skip' });
    assert.equal(skipped.location, '/');
    assert.equal((await accountRow(penny.id))?.last_sign_in_at, t.clock.now());
  });
});

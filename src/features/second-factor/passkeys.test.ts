// Passkeys through the app (app.request), answered by a software authenticator: registration from Profile, sign-in
// with a passkey alone, the passkey as the second factor, and every refusal, each of which leaves no session behind.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import {
  SelectQueryNode,
  TableNode,
  type Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { buildTestApp, type TestApp, type TestClient } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../../test/helpers/factories.ts';
import { atEnrolStep, codesOn, codeNow, enrolTotp } from '../../../test/helpers/second-factor.ts';
import { optionsFrom, registerPasskeyFor, SoftAuthenticator } from '../../../test/helpers/webauthn.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { openDatabase } from '../../db/connect.ts';
import type { DB } from '../../db/schema.ts';
import { deletePasskeys, listPasskeys } from './passkeys.repo.ts';
import { CHALLENGE_TTL_MS, PASSKEY_NAME_MAX } from './passkeys.ceremony.ts';

type Account = Awaited<ReturnType<typeof buildAccount>>;

/**
 * Once armed, deletes the passkey the app next looks up, through another connection, as soon as the lookup returns:
 * a removal (or a reset of the second factor) landing between a sign-in's lookup and its update of the counter.
 */
class RemoveAfterLookup implements KyselyPlugin {
  armed = false;
  private readonly lookups = new WeakSet<QueryId>();
  constructor(private readonly other: Kysely<DB>) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const { node } = args;
    const fromPasskeys =
      SelectQueryNode.is(node) &&
      (node.from?.froms ?? []).some((f) => TableNode.is(f) && f.table.identifier.name === 'passkeys');
    if (this.armed && fromPasskeys) this.lookups.add(args.queryId);
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const found = args.result.rows[0] as { id?: string } | undefined;
    if (this.armed && this.lookups.has(args.queryId) && found?.id) {
      this.armed = false;
      await this.other.deleteFrom('passkeys').where('id', '=', found.id).execute();
    }
    return args.result;
  }
}

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    await getDb().db.deleteFrom('auth_throttle').execute();
    await getDb().db.deleteFrom('webauthn_challenges').execute();
    t = buildTestApp(getDb(), { metricsToken: 'metrics-token-for-passkey-tests' });
  });

  const sessionsOf = async (accountId: string) =>
    (await t.deps.db.selectFrom('sessions').select(['stage']).where('account_id', '=', accountId).execute()).map(
      (r) => r.stage,
    );
  const challenges = () => t.deps.db.selectFrom('webauthn_challenges').selectAll().execute();
  const throttleRows = () => t.deps.db.selectFrom('auth_throttle').selectAll().orderBy('key').execute();

  /** An account with one passkey (its first second factor), registered from Profile, and the client that did it. */
  async function withPasskey(opts: { totp?: boolean } = {}) {
    const account = await buildAccount(t);
    const totp = opts.totp ? await enrolTotp(t, account) : undefined;
    const authenticator = new SoftAuthenticator();
    const client = totp ? await signInTotp(account, totp.secret) : await signIn(t, account);
    const added = await registerPasskeyFor(client, account.password, authenticator, 'Laptop');
    assert.equal(added.status, 303);
    await client.post('/logout');
    return { account, authenticator, totp };
  }

  async function signInTotp(account: Account, secret: string): Promise<TestClient> {
    const c = t.client();
    await c.get('/login');
    await c.post('/login', { username: account.username, password: account.password });
    await c.get('/login/totp');
    const done = await c.post('/login/totp', { code: codeNow(t, secret) });
    assert.equal(done.location, '/');
    t.clock.advance(30_000);
    return c;
  }

  /** A fresh browser at /login that asked for sign-in options (its pending sign-in cookie set). */
  async function atPasskeySignIn(): Promise<{ client: TestClient; options: any }> {
    const client = t.client();
    const page = await client.get('/login');
    assert.match(page.text, /Sign in with a passkey/);
    return { client, options: await optionsFrom(client, '/login/passkey/options') };
  }

  const signInWith = (client: TestClient, answer: unknown) =>
    client.post('/login/passkey', { answer: JSON.stringify(answer) });

  /** A browser signed in fully with the authenticator's passkey. */
  async function signInByPasskey(authenticator: SoftAuthenticator): Promise<TestClient> {
    const { client, options } = await atPasskeySignIn();
    assert.equal((await signInWith(client, authenticator.assert(options))).location, '/');
    assert.equal((await client.get('/')).status, 200);
    return client;
  }

  test('a first passkey added from Profile comes with recovery codes; Profile lists it; a second one does not', async () => {
    const account = await buildAccount(t);
    const client = await signIn(t, account);
    const authenticator = new SoftAuthenticator();
    // Behind "Confirm it's you": the page and the options are refused until the session confirmed itself.
    assert.equal(
      (await client.get('/profile/passkeys/add')).location,
      '/profile?notice=confirm-first-passkeys#profile-passkeys',
    );
    const early = await client.post('/profile/passkeys/options');
    assert.equal(early.status, 409);
    assert.match(JSON.parse(early.text).error, /Confirm it’s you first/);

    const first = await registerPasskeyFor(client, account.password, authenticator, 'Work laptop');
    assert.equal(first.location, '/profile/recovery-codes?from=passkey');
    const shown = await client.get(first.location!);
    assert.match(shown.text, /Passkey added/);
    assert.equal(codesOn(shown.text).length, 10, 'the recovery codes are shown once');

    const rows = await listPasskeys(t.deps.db, account.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.name, 'Work laptop');
    assert.equal(rows[0]!.credential_id, authenticator.credentials[0]!.id);
    const enrolPrompt = await t.deps.db
      .selectFrom('accounts')
      .select('totp_enrol_prompt')
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(enrolPrompt.totp_enrol_prompt, 0);

    const second = await registerPasskeyFor(client, account.password, new SoftAuthenticator());
    assert.equal(second.location, '/profile?notice=passkey-added#profile-passkeys');
    const profile = await client.get(second.location!);
    assert.match(profile.text, /Work laptop/);
    assert.match(profile.text, /Passkey<\/td>/, 'an unnamed passkey is named after its kind');
    assert.match(profile.text, /Status: <span class="badge">on<\/span> \(2 passkeys\)/);
    assert.ok(!profile.text.includes(rows[0]!.credential_id), 'no credential id on the page');
    assert.ok(!profile.text.includes(rows[0]!.public_key), 'no public key on the page');
    const codesLeft = await t.deps.db
      .selectFrom('recovery_codes')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(codesLeft.length, 10, 'the second passkey kept the codes');
    // Profile itself runs no script; only the page that adds a passkey does.
    assert.match(profile.headers.get('content-security-policy') ?? '', /script-src 'none'/);
  });

  test('registration refusals: no user verification, an expired or reused challenge, a credential another account holds', async () => {
    const account = await buildAccount(t);
    const client = await signIn(t, account);
    const authenticator = new SoftAuthenticator();
    await client.get('/profile');
    await client.post('/profile/reauth', { secret: account.password });
    await client.get('/profile/passkeys/add');
    const add = (answer: unknown) => client.post('/profile/passkeys/add', { answer: JSON.stringify(answer), name: '' });

    const noUv = await add(
      authenticator.register(await optionsFrom(client, '/profile/passkeys/options'), { userVerified: false }),
    );
    assert.equal(noUv.status, 401);
    assert.match(noUv.text, /could not be verified/);

    const options = await optionsFrom(client, '/profile/passkeys/options');
    t.clock.advance(CHALLENGE_TTL_MS);
    const late = await add(authenticator.register(options));
    assert.equal(late.status, 409);
    assert.match(late.text, /expired or was already answered/);
    t.clock.advance(-CHALLENGE_TTL_MS);

    const answer = authenticator.register(await optionsFrom(client, '/profile/passkeys/options'));
    assert.equal((await add(answer)).status, 303);
    assert.equal((await add(answer)).status, 409, 'the same answer again finds its challenge spent');

    const other = await buildAccount(t);
    const otherClient = await signIn(t, other);
    await otherClient.get('/profile');
    await otherClient.post('/profile/reauth', { secret: other.password });
    const theirs = await optionsFrom(otherClient, '/profile/passkeys/options');
    const dup = await otherClient.post('/profile/passkeys/add', {
      answer: JSON.stringify(authenticator.register(theirs, { reuse: authenticator.credentials.at(-1)! })),
      name: '',
    });
    assert.equal(dup.status, 409);
    assert.match(dup.text, /registered already/);
    assert.equal((await listPasskeys(t.deps.db, other.id)).length, 0);
    assert.equal((await listPasskeys(t.deps.db, account.id)).length, 1);
  });

  test('sign-in with a passkey alone: one step, a full session, the sign-in recorded, the counter moved', async () => {
    const { account, authenticator } = await withPasskey();
    const { client, options } = await atPasskeySignIn();
    assert.equal(options.userVerification, 'required');
    assert.deepEqual(options.allowCredentials ?? [], [], 'discoverable: no account named before the answer');
    t.clock.advance(1000);
    const res = await signInWith(client, authenticator.assert(options));
    assert.equal(res.location, '/');
    assert.equal((await client.get('/')).status, 200);
    assert.deepEqual(await sessionsOf(account.id), ['full']);
    const row = await t.deps.db
      .selectFrom('accounts')
      .select('last_sign_in_at')
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.last_sign_in_at), t.clock.now());
    const [passkey] = await listPasskeys(t.deps.db, account.id);
    assert.equal(passkey!.counter, 1);
    assert.equal(passkey!.last_used_at, t.clock.now());
    assert.deepEqual(await challenges(), [], 'the challenge is spent');
    const metrics = await t.app.request('/metrics', {
      headers: { authorization: 'Bearer metrics-token-for-passkey-tests' },
    });
    assert.match(await metrics.text(), /svc_passkey_signins_total\{step="sign_in",outcome="success"\} 1/);
  });

  test('sign-in refusals: replayed answer, expired challenge, another browser’s challenge, counter regression, no user verification', async () => {
    const { account, authenticator } = await withPasskey();
    const before = await sessionsOf(account.id);

    const { client, options } = await atPasskeySignIn();
    const answer = authenticator.assert(options);
    assert.equal((await signInWith(client, answer)).location, '/');
    await client.get('/');
    await client.post('/logout');
    const replay = t.client();
    await replay.get('/login');
    await optionsFrom(replay, '/login/passkey/options');
    const replayed = await signInWith(replay, answer);
    assert.equal(replayed.status, 401, 'an answer to another challenge does not verify');
    const again = await signInWith(client, answer);
    assert.equal(again.status, 409, 'the spent challenge is gone');

    const expired = await atPasskeySignIn();
    t.clock.advance(CHALLENGE_TTL_MS);
    const late = await signInWith(expired.client, authenticator.assert(expired.options));
    assert.equal(late.status, 409);
    assert.match(late.text, /expired or was already answered/);

    const victim = await atPasskeySignIn();
    const thief = t.client();
    await thief.get('/login');
    const stolen = await signInWith(thief, authenticator.assert(victim.options));
    assert.equal(stolen.status, 409, 'a challenge held for another browser’s pending sign-in is not this one’s');

    const cloned = await atPasskeySignIn();
    const regress = await signInWith(cloned.client, authenticator.assert(cloned.options, { counter: 1 }));
    assert.equal(regress.status, 403);
    assert.match(regress.text, /may have been cloned/);
    const warning = t.logs.find((l) => l.includes('signature counter went backwards'));
    assert.ok(warning, 'a log line for administrators');
    assert.ok(!warning.includes(cloned.options.challenge), 'no challenge in the log line');

    const lax = await atPasskeySignIn();
    const noUv = await signInWith(lax.client, authenticator.assert(lax.options, { userVerified: false }));
    assert.equal(noUv.status, 401);

    for (const [i, c] of [replay, client, expired.client, thief, cloned.client, lax.client].entries())
      assert.equal((await c.get('/')).location, '/login', `client ${i}`);
    assert.deepEqual(await sessionsOf(account.id), before, 'no refused answer left a session');
    for (const l of t.logs) assert.ok(!l.includes(options.challenge), 'no challenge in any log line');
  });

  test('a removed passkey, one cleared by re-enrolment, and a suspended account’s passkey are refused', async () => {
    const { account, authenticator } = await withPasskey();
    const second = await withPasskey();

    // Removed from Profile: asked first, then gone.
    const owner = await signInByPasskey(second.authenticator);
    await owner.get('/profile');
    await owner.post('/profile/reauth', { secret: second.account.password });
    const [row] = await listPasskeys(t.deps.db, second.account.id);
    const ask = await owner.post('/profile/passkeys/remove', { id: row!.id });
    assert.equal(ask.location, `/profile?remove-passkey=${row!.id}#passkey-remove`);
    const step = await owner.get(ask.location!);
    assert.match(step.text, /Remove the passkey “Laptop”\?/);
    assert.match(step.text, /last second factor/);
    assert.equal((await listPasskeys(t.deps.db, second.account.id)).length, 1, 'asking removes nothing');
    const removed = await owner.post('/profile/passkeys/remove', { id: row!.id, confirm: 'yes' });
    assert.equal(removed.location, '/profile?notice=passkey-removed-last#profile-passkeys');
    const codes = await t.deps.db
      .selectFrom('recovery_codes')
      .select('id')
      .where('account_id', '=', second.account.id)
      .execute();
    assert.deepEqual(codes, [], 'the last factor gone, its recovery codes go too');
    await owner.post('/logout');
    const gone = await atPasskeySignIn();
    const refusedGone = await signInWith(gone.client, second.authenticator.assert(gone.options));
    assert.equal(refusedGone.status, 401);
    assert.match(refusedGone.text, /not registered with svc/);

    // Re-enrolment by an administrator clears every passkey (done here directly through the repository).
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', account.id).execute();
    const suspended = await atPasskeySignIn();
    const refusedSuspended = await signInWith(suspended.client, authenticator.assert(suspended.options));
    assert.equal(refusedSuspended.status, 403);
    assert.match(refusedSuspended.text, /is suspended/);
    await t.deps.db.updateTable('accounts').set({ suspended_at: null }).where('id', '=', account.id).execute();
    assert.equal(await deletePasskeys(t.deps.db, account.id), 1);
    const cleared = await atPasskeySignIn();
    const refusedCleared = await signInWith(cleared.client, authenticator.assert(cleared.options));
    assert.equal(refusedCleared.status, 401);

    for (const c of [gone.client, suspended.client, cleared.client])
      assert.equal((await c.get('/')).location, '/login');
    assert.deepEqual(await sessionsOf(account.id), []);
    assert.deepEqual(await sessionsOf(second.account.id), []);
    // With no second factor left, the password alone signs in again.
    assert.equal((await (await signIn(t, account)).get('/')).status, 200);
  });

  test('failed passkey sign-ins count in the per-address sign-in throttle; a refused attempt writes nothing', async () => {
    const { account, authenticator } = await withPasskey();
    // Options asked for before the address is locked: the answer comes after.
    const { client, options } = await atPasskeySignIn();
    for (let i = 0; i < 30; i++) {
      const res = await t.client().post('/login/passkey', { answer: '{}' });
      assert.notEqual(res.status, 429, `attempt ${i + 1}`);
    }
    const rows = await throttleRows();
    const held = await challenges();
    // Locked: asking for options is refused before the fingerprint or PIN, and the answer after it; neither writes.
    const asked = await t.client().post('/login/passkey/options');
    assert.equal(asked.status, 429);
    assert.match(JSON.parse(asked.text).error, /Too many failed attempts/);
    const locked = await signInWith(client, authenticator.assert(options));
    assert.equal(locked.status, 429);
    assert.match(locked.text, /Too many failed attempts/);
    assert.deepEqual(await throttleRows(), rows, 'the refused attempts wrote no throttle row');
    assert.deepEqual(await challenges(), held, 'held no challenge, nor spent one');
    // The same address's passwords are locked too: one sign-in throttle per address.
    const password = await client.post('/login', { username: account.username, password: account.password });
    assert.equal(password.status, 429);
    assert.deepEqual(await sessionsOf(account.id), []);
  });

  test('the passkey as second factor after a password; a passkey-only account is asked no app code', async () => {
    const { account, authenticator } = await withPasskey();
    const client = t.client();
    await client.get('/login');
    const first = await client.post('/login', { username: account.username, password: account.password });
    assert.equal(first.location, '/login/totp');
    const step = await client.get('/login/totp');
    assert.match(step.text, /Use your passkey/);
    assert.match(step.text, /Recovery code/);
    assert.doesNotMatch(step.text, /Authentication code/, 'no field for an app the account does not have');
    assert.match(step.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    const typedCode = await client.post('/login/totp', { code: '123456' });
    assert.equal(typedCode.status, 401, 'six digits are no recovery code');
    const options = await optionsFrom(client, '/login/totp/passkey/options');
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [authenticator.credentials[0]!.id],
    );
    const done = await client.post('/login/totp/passkey', { answer: JSON.stringify(authenticator.assert(options)) });
    assert.equal(done.location, '/');
    assert.equal((await client.get('/')).status, 200);
    assert.deepEqual(await sessionsOf(account.id), ['full']);
  });

  test('second-factor step refusals: another account’s passkey, another session’s challenge, a replayed answer', async () => {
    const { account, authenticator } = await withPasskey({ totp: true });
    const other = await withPasskey();
    const atStep = async () => {
      const c = t.client();
      await c.get('/login');
      assert.equal(
        (await c.post('/login', { username: account.username, password: account.password })).location,
        '/login/totp',
      );
      const page = await c.get('/login/totp');
      assert.match(page.text, /Authentication code/, 'TOTP and passkey on one page');
      assert.match(page.text, /Use your passkey/);
      return c;
    };
    const c = await atStep();
    const options = await optionsFrom(c, '/login/totp/passkey/options');
    // The other account's authenticator answers this step's challenge with its own credential.
    const foreign = other.authenticator.assert({ ...options, allowCredentials: [] });
    const refusedForeign = await c.post('/login/totp/passkey', { answer: JSON.stringify(foreign) });
    assert.equal(refusedForeign.status, 401);

    const mine = await optionsFrom(c, '/login/totp/passkey/options');
    const d = await atStep();
    const refusedSession = await d.post('/login/totp/passkey', { answer: JSON.stringify(authenticator.assert(mine)) });
    assert.equal(refusedSession.status, 409, 'the challenge was held for the other session');

    const answer = authenticator.assert(mine);
    assert.equal((await c.post('/login/totp/passkey', { answer: JSON.stringify(answer) })).location, '/');
    const e = await atStep();
    await optionsFrom(e, '/login/totp/passkey/options');
    const replayed = await e.post('/login/totp/passkey', { answer: JSON.stringify(answer) });
    assert.ok([401, 409].includes(replayed.status), `replay refused (${replayed.status})`);
    assert.deepEqual(
      (await sessionsOf(account.id)).sort(),
      ['full', 'totp', 'totp'],
      'only the answered session is full',
    );
    assert.deepEqual(await sessionsOf(other.account.id), []);
  });

  test('skipping the enrolment offer after a passkey was added elsewhere does not sign in without it', async () => {
    const account = await buildAccount(t, { enrolPrompt: true });
    const offered = await atEnrolStep(t, account);
    const elsewhere = await signInAfterSkip(account);
    assert.equal((await registerPasskeyFor(elsewhere, account.password, new SoftAuthenticator())).status, 303);
    const skipped = await offered.post('/login/enrol', { action: 'skip' });
    assert.equal(skipped.location, '/login?notice=session-ended');
    assert.equal((await offered.get('/')).location, '/login');
  });

  /** A full session of an account offered enrolment: a sign-in that skips the offer (which then asks no more). */
  async function signInAfterSkip(account: Account): Promise<TestClient> {
    const c = await atEnrolStep(t, account);
    assert.equal((await c.post('/login/enrol', { action: 'skip' })).location, '/');
    await t.deps.db.updateTable('accounts').set({ totp_enrol_prompt: 1 }).where('id', '=', account.id).execute();
    return c;
  }

  test('a rename is the holder’s own; a pending challenge is pruned once expired', async () => {
    const { account, authenticator } = await withPasskey();
    const intruder = await buildAccount(t);
    const [row] = await listPasskeys(t.deps.db, account.id);
    const theirs = await signIn(t, intruder);
    await theirs.get('/profile');
    assert.equal((await theirs.post('/profile/passkeys/rename', { id: row!.id, name: 'Mine now' })).status, 303);
    assert.equal((await listPasskeys(t.deps.db, account.id))[0]!.name, 'Laptop', 'a foreign id is a no-op');
    const own = await signInByPasskey(authenticator);
    await own.get('/profile');
    const renamed = await own.post('/profile/passkeys/rename', { id: row!.id, name: '  Phone  ' });
    assert.equal(renamed.location, '/profile?notice=passkey-renamed#profile-passkeys');
    assert.equal((await listPasskeys(t.deps.db, account.id))[0]!.name, 'Phone');
    const blank = await own.post('/profile/passkeys/rename', { id: row!.id, name: '  ' });
    assert.equal(blank.status, 400);
    const { client } = await atPasskeySignIn();
    await optionsFrom(client, '/login/passkey/options');
    assert.equal((await challenges()).length >= 1, true);
    t.clock.advance(CHALLENGE_TTL_MS);
    await housekeepOnce(t.deps);
    assert.deepEqual(await challenges(), [], 'housekeeping deletes expired challenges');
  });
  test('an answer that is not a WebAuthn answer is malformed (400) at every door, not a failed verification', async () => {
    const { account, authenticator } = await withPasskey();
    const malformed = [
      'not JSON',
      '{}',
      JSON.stringify({ id: 'abc', rawId: 'abc', type: 'public-key', response: {} }),
      '',
    ];
    // Sign-in with a passkey alone.
    for (const answer of malformed) {
      const { client } = await atPasskeySignIn();
      const res = await client.post('/login/passkey', { answer });
      assert.equal(res.status, 400, `sign-in: ${answer}`);
      assert.match(res.text, /incomplete or not understood, so nothing was checked/);
    }
    // The second-factor step: each still counts against the session's three attempts, so two, then the real answer.
    const step = t.client();
    await step.get('/login');
    await step.post('/login', { username: account.username, password: account.password });
    await step.get('/login/totp');
    for (const answer of malformed.slice(0, 2)) {
      await optionsFrom(step, '/login/totp/passkey/options');
      const res = await step.post('/login/totp/passkey', { answer });
      assert.equal(res.status, 400, `step: ${answer}`);
      assert.match(res.text, /incomplete or not understood/);
    }
    const options = await optionsFrom(step, '/login/totp/passkey/options');
    const done = await step.post('/login/totp/passkey', { answer: JSON.stringify(authenticator.assert(options)) });
    assert.equal(done.location, '/');
    // Registration from Profile: the typed name is kept for the next try.
    await step.get('/profile');
    await step.post('/profile/reauth', { secret: account.password });
    await step.get('/profile/passkeys/add');
    await optionsFrom(step, '/profile/passkeys/options');
    const added = await step.post('/profile/passkeys/add', { answer: malformed[2]!, name: 'Phone' });
    assert.equal(added.status, 400);
    assert.match(added.text, /incomplete or not understood/);
    assert.match(added.text, /value="Phone"/);
    assert.equal((await listPasskeys(t.deps.db, account.id)).length, 1);
  });

  test('a passkey removed between its lookup and the use’s record is refused as not registered, with no clone alarm', async () => {
    const { account, authenticator } = await withPasskey();
    const other = await openDatabase(getDb().database);
    const race = new RemoveAfterLookup(other.db);
    try {
      const racing = buildTestApp({ ...getDb(), db: getDb().db.withPlugin(race) });
      const client = racing.client();
      await client.get('/login');
      const options = await optionsFrom(client, '/login/passkey/options');
      race.armed = true;
      const res = await signInWith(client, authenticator.assert(options));
      assert.equal(race.armed, false, 'the passkey was deleted after its lookup');
      assert.equal(res.status, 401);
      assert.match(res.text, /not registered with svc/);
      assert.doesNotMatch(res.text, /cloned/);
      assert.ok(!racing.logs.some((l) => l.includes('signature counter went backwards')), 'no clone warning');
      assert.deepEqual(await listPasskeys(t.deps.db, account.id), []);
      assert.deepEqual(await sessionsOf(account.id), []);
    } finally {
      await other.db.destroy();
    }
  });

  test('a passkey name is bounded in characters, not UTF-16 units: astral characters up to the limit are kept whole', async () => {
    const { account, authenticator } = await withPasskey();
    const [row] = await listPasskeys(t.deps.db, account.id);
    const own = await signInByPasskey(authenticator);
    await own.get('/profile');
    const rename = (name: string) => own.post('/profile/passkeys/rename', { id: row!.id, name });
    for (const name of ['🔑'.repeat(PASSKEY_NAME_MAX), `${'a'.repeat(PASSKEY_NAME_MAX - 1)}🔑`]) {
      assert.equal((await rename(name)).location, '/profile?notice=passkey-renamed#profile-passkeys');
      assert.equal((await listPasskeys(t.deps.db, account.id))[0]!.name, name, 'stored whole');
    }
    const over = await rename('🔑'.repeat(PASSKEY_NAME_MAX + 1));
    assert.equal(over.status, 400);
    assert.match(over.text, new RegExp(`Name it in 1 to ${PASSKEY_NAME_MAX} characters`));
    assert.equal((await listPasskeys(t.deps.db, account.id))[0]!.name, `${'a'.repeat(PASSKEY_NAME_MAX - 1)}🔑`);
  });

  test('an administrator’s reset during the second-factor step starts the passkey answer over, counting nothing', async () => {
    const { account, authenticator } = await withPasskey({ totp: true });
    const client = t.client();
    await client.get('/login');
    const first = await client.post('/login', { username: account.username, password: account.password });
    assert.equal(first.location, '/login/totp');
    await client.get('/login/totp');
    const options = await optionsFrom(client, '/login/totp/passkey/options');
    const rows = await throttleRows();
    // The reset, as re-enrolment does it: TOTP off (and asked for again), every passkey gone.
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_secret: null, totp_enabled: 0, totp_last_step: null, totp_enrol_prompt: 1 })
      .where('id', '=', account.id)
      .execute();
    assert.equal(await deletePasskeys(t.deps.db, account.id), 1);
    const res = await client.post('/login/totp/passkey', { answer: JSON.stringify(authenticator.assert(options)) });
    assert.equal(res.location, '/login?notice=session-ended');
    assert.deepEqual(await throttleRows(), rows, 'the answer counted in no limit');
    assert.deepEqual(await sessionsOf(account.id), [], 'the pending session ended');
    assert.equal((await client.get('/')).location, '/login');
  });
});

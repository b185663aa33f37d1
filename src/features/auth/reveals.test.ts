// Secrets held for one showing, sealed per session, and one-time form tokens.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { signedInAs } from '../../../test/helpers/factories.ts';
import { sha256 } from '../../deps.ts';
import { holdSecret, newFormToken, spendOnceToken, takeSecret } from './reveals.service.ts';

forEachDialect((getDb) => {
  let t: TestApp;
  let cookie: string;
  beforeEach(async () => {
    t = buildTestApp(getDb());
    const { client } = await signedInAs(t, 'admin');
    cookie = client.cookies.get('svc_session')!;
  });

  test('a held secret is shown once, is stored sealed, and a newer one of the same kind replaces it', async () => {
    await holdSecret(t.deps, cookie, 'api-token', 'first-secret-value');
    await holdSecret(t.deps, cookie, 'api-token', 'second-secret-value');
    const rows = await t.deps.db.selectFrom('session_reveals').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(
      !rows[0]!.sealed.includes('second-secret-value') &&
        !rows[0]!.sealed.includes(Buffer.from('second-secret-value').toString('base64url')),
    );
    assert.equal(await takeSecret(t.deps, cookie, 'api-token'), 'second-secret-value');
    assert.equal(await takeSecret(t.deps, cookie, 'api-token'), undefined, 'a second look shows nothing');
  });

  test('only the session that minted it can open it, and only under its kind', async () => {
    await holdSecret(t.deps, cookie, 'invitation', 'link');
    const other = (await signedInAs(t, 'admin')).client.cookies.get('svc_session')!;
    assert.equal(await takeSecret(t.deps, other, 'invitation'), undefined);
    // Re-filed under another kind (as a database writer could), it no longer verifies.
    await t.deps.db.updateTable('session_reveals').set({ kind: 'reset-link' }).execute();
    assert.equal(await takeSecret(t.deps, cookie, 'reset-link'), undefined);
  });

  test('a held secret expires after 10 minutes and goes with its session', async () => {
    await holdSecret(t.deps, cookie, 'a', 'x');
    t.clock.advance(10 * 60 * 1000 + 1);
    assert.equal(await takeSecret(t.deps, cookie, 'a'), undefined);
    await holdSecret(t.deps, cookie, 'b', 'y');
    assert.ok(await spendOnceToken(t.deps, sha256(cookie), newFormToken()));
    await t.deps.db.deleteFrom('sessions').where('id_hash', '=', sha256(cookie)).execute();
    assert.equal((await t.deps.db.selectFrom('session_reveals').selectAll().execute()).length, 0);
    assert.equal((await t.deps.db.selectFrom('spent_form_tokens').selectAll().execute()).length, 0);
  });

  test('a form token is spent once, even by racing posts; malformed tokens never count', async () => {
    const token = newFormToken();
    const results = await Promise.all([1, 2, 3, 4].map(() => spendOnceToken(t.deps, sha256(cookie), token)));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(await spendOnceToken(t.deps, sha256(cookie), ''), false);
    assert.equal(await spendOnceToken(t.deps, sha256(cookie), 'short'), false);
    assert.equal(await spendOnceToken(t.deps, sha256(cookie), newFormToken()), true);
  });
});

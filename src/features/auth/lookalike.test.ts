// Look-alike usernames: the skeleton rule, the mixed-script rule, and the unique skeleton index on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../../test/helpers/app.ts';
import { forEachDialect } from '../../../test/helpers/db.ts';
import { buildAccount, signedInAs } from '../../../test/helpers/factories.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { isMixedScript, usernameSkeleton } from './lookalike.ts';

// Capitals whose UTS #39 prototype is another letter (I -> l) and digits (1 -> l, 0 -> O): lower-casing alone misses
// them.
const CASE_CONFUSABLES: [string, string][] = [
  ['Iisa', 'lisa'],
  ['Ian', 'lan'],
  ['WiII', 'will'],
  ['j0hn', 'john'],
  ['0ps', 'ops'],
];

test('names that look alike share a skeleton; different names do not', () => {
  const same: [string, string][] = [
    ['admin', '\u0430dmin'], // Cyrillic а
    ['admin', 'ADMIN'],
    ['admin', '\u0410DMIN'], // Cyrillic А, upper case
    ['admin', 'adrnin'], // rn for m
    ['pop', '\u0440\u043e\u0440'], // all Cyrillic р о р
    ['full', '\uff46\uff55\uff4c\uff4c'], // fullwidth forms
    ['bob1', 'bobl'],
    ['\u00e9mile', 'e\u0301mile'], // composed and decomposed é
    ...CASE_CONFUSABLES,
    ['Iisa', 'LISA'],
    ['1an', 'ian'], // 1 -> l, and capital I -> l
  ];
  for (const [a, b] of same) assert.equal(usernameSkeleton(a), usernameSkeleton(b), `${a} ~ ${b}`);
  const different: [string, string][] = [
    ['admin', 'admin2'],
    ['john', 'jon'],
    ['ops', 'pos'],
    ['bob', 'rob'],
    ['дмитрий', 'dmitrii'],
    ['田中', '田村'],
  ];
  for (const [a, b] of different) assert.notEqual(usernameSkeleton(a), usernameSkeleton(b), `${a} / ${b}`);
});

test('a name mixing scripts is mixed; one script with digits and punctuation, or Han with kana or Hangul, is not', () => {
  for (const name of ['\u0430dmin', 'p\u0430ypal', 'ab\u03b3', 'ivan\u0438'])
    assert.equal(isMixedScript(name), true, name);
  for (const name of [
    'admin',
    'user-1_x.y',
    'дмитрий',
    'ελένη',
    '田中',
    '田中さくら',
    '김철수',
    'Dvořák',
    'über',
    'ｆｕｌｌ',
  ]) {
    assert.equal(isMixedScript(name), false, name);
  }
});

forEachDialect((getDb) => {
  test('the database refuses a second account whose skeleton matches an existing one', async () => {
    const t = buildTestApp(getDb());
    await t.deps.db.deleteFrom('accounts').where('username', 'in', ['admin', '\u0430dmin', 'adrnin']).execute();
    await buildAccount(t, { username: 'admin' });
    for (const username of ['\u0430dmin', 'adrnin']) {
      await assert.rejects(buildAccount(t, { username }), (err) => isUniqueViolation(err), username);
    }
    const rows = await t.deps.db
      .selectFrom('accounts')
      .select(['username', 'username_skeleton'])
      .where('username_lower', 'in', ['admin', '\u0430dmin', 'adrnin'])
      .execute();
    assert.deepEqual(rows, [{ username: 'admin', username_skeleton: usernameSkeleton('admin') }]);
  });

  test('at join, a name whose capitals or digits look like an existing name is refused next to the field', async () => {
    const t = buildTestApp(getDb());
    const keys = CASE_CONFUSABLES.flat().map(usernameSkeleton);
    await t.deps.db.deleteFrom('accounts').where('username_skeleton', 'in', keys).execute();
    for (const [, existing] of CASE_CONFUSABLES) await buildAccount(t, { username: existing });
    const admin = await signedInAs(t, 'admin');
    await admin.client.get('/settings?tab=team');
    const minted = await admin.client.post('/settings/accounts', { role: 'viewer' });
    const token = /invite\?token=([A-Za-z0-9_-]{43})/.exec((await admin.client.get(minted.location!)).text)?.[1];
    assert.ok(token, 'the join link is shown');
    for (const [username] of CASE_CONFUSABLES) {
      const res = await t.client().post('/invite', { token, username, password: 'a long enough password' });
      assert.equal(res.status, 409, username);
      assert.match(res.text, /That username looks like/, username);
      assert.match(res.text, /aria-invalid="true"/, username);
    }
    assert.equal(
      (
        await t.deps.db
          .selectFrom('accounts')
          .select('id')
          .where(
            'username',
            'in',
            CASE_CONFUSABLES.map(([a]) => a),
          )
          .execute()
      ).length,
      0,
    );
  });
});

// The session cookie: only the cookie of exactly its name signs in, under both names (plain and __Host- when Secure).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../test/helpers/app.ts';
import { forEachDialect } from '../../test/helpers/db.ts';
import { signedInAs } from '../../test/helpers/factories.ts';

forEachDialect((getDb) => {
  for (const secureCookies of [false, true]) {
    const name = secureCookies ? '__Host-svc_session' : 'svc_session';
    const other = secureCookies ? 'svc_session' : '__Host-svc_session';
    test(`only the ${name} cookie signs in, whatever else the Cookie header carries`, async () => {
      const t = buildTestApp(getDb(), { secureCookies });
      const { client } = await signedInAs(t, 'viewer');
      const id = client.cookies.get(name);
      assert.ok(id, `signing in set ${name}`);
      const status = async (cookie: string) =>
        (await t.app.request('http://localhost/', { headers: { cookie } })).status;
      for (const cookie of [`${name}=${id}`, `theme=dark;  ${name} = ${id} ;x=y`, `x${name}=evil; ${name}=${id}`]) {
        assert.equal(await status(cookie), 200, cookie);
      }
      for (const cookie of [
        `${other}=${id}`,
        `x${name}=${id}`,
        `${name}2=${id}`,
        `a=${name}=${id}`,
        `${name}=${id}x`,
        `${name}=`,
        `${name}`,
      ]) {
        assert.equal(await status(cookie), 303, cookie);
      }
    });
  }
});

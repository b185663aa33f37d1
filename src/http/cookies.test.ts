// cookieValue: the session cookie read from a Cookie header, agreeing with Hono's cookie parser on every header.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'hono/utils/cookie';
import { cookieValue } from './cookies.ts';

const id = 'AbC-_0123456789abcdefghijklmnopqrstuvwxyzAB';

test('finds the named cookie only: never one whose name merely contains it', () => {
  assert.equal(cookieValue(`svc_session=${id}`, 'svc_session'), id);
  assert.equal(cookieValue(`xsvc_session=evil; svc_session=${id}`, 'svc_session'), id);
  assert.equal(cookieValue(`svc_session2=evil; a=b`, 'svc_session'), undefined);
  assert.equal(cookieValue(`a=svc_session=evil`, 'svc_session'), undefined);
  assert.equal(cookieValue(`__Host-svc_session=${id}`, 'svc_session'), undefined);
  assert.equal(cookieValue(`svc_session=${id}`, '__Host-svc_session'), undefined);
  assert.equal(cookieValue(`theme=dark;  __Host-svc_session = ${id} ;x=y`, '__Host-svc_session'), id);
  assert.equal(cookieValue(`svc_session=first; svc_session=second`, 'svc_session'), 'first');
  assert.equal(cookieValue(`svc_session`, 'svc_session'), undefined);
  assert.equal(cookieValue(`svc_session=`, 'svc_session'), '');
  assert.equal(cookieValue(``, 'svc_session'), undefined);
  assert.equal(cookieValue(`;;svc_session=${id};`, 'svc_session'), id);
});

test('agrees with hono/utils/cookie on headers of plain session-like values', () => {
  const pieces = [`svc_session=${id}`, 'svc_session=other-value', 'xsvc_session=evil', 'svc_session2=evil', 'theme=dark', 'empty=', 'novalue', ' spaced = v ', 'q="quoted"'];
  let cases = 0;
  for (const a of pieces) {
    for (const b of pieces) {
      for (const sep of [';', '; ', ' ; ']) {
        const header = `${a}${sep}${b}`;
        assert.equal(cookieValue(header, 'svc_session'), parse(header, 'svc_session').svc_session, header);
        cases++;
      }
    }
  }
  assert.ok(cases > 200);
});

test('takes the value as sent: quoted, percent-encoded or malformed values are not turned into a session id', () => {
  // Hono's parser would strip the quotes and decode; these values then fail resolveSession's check (signed out).
  assert.equal(cookieValue(`svc_session="${id}"`, 'svc_session'), `"${id}"`);
  assert.equal(cookieValue(`svc_session=%41${id.slice(1)}`, 'svc_session'), `%41${id.slice(1)}`);
  // The first cookie of that name counts, even when it is not valid; a later one is never picked instead.
  assert.equal(cookieValue(`svc_session=a b; svc_session=${id}`, 'svc_session'), 'a b');
});

test('headers without "=" for long stretches are read correctly', () => {
  const filler = ';'.repeat(20_000);
  assert.equal(cookieValue(`${filler}=`, 'svc_session'), undefined);
  assert.equal(cookieValue(`svc_session${filler}=x`, 'svc_session'), undefined);
  assert.equal(cookieValue(`a;b;c${filler}svc_session=${id}`, 'svc_session'), id);
  assert.equal(cookieValue(`a;b;svc_session;c=d; svc_session=${id}`, 'svc_session'), id);
  assert.equal(cookieValue(`x=1;${filler};svc_session=${id};y`, 'svc_session'), id);
});

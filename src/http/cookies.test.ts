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

test('agrees with hono/utils/cookie on headers carrying session-like values', () => {
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

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isConnectTimeout, isDatabaseUnavailable, isQueryTimeout } from './errors.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

test('isDatabaseUnavailable: a server that is down, restarting, unreachable or past a timeout', () => {
  for (const err of [
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('read ECONNRESET', 'ECONNRESET'),
    withCode('getaddrinfo ENOTFOUND db', 'ENOTFOUND'),
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('the database system is starting up', '57P03'),
    withCode('the database system is shutting down', '57P03'),
    withCode('sorry, too many clients already', '53300'),
    withCode('canceling statement due to statement timeout', '57014'),
    withCode('connection failure', '08006'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('Query read timeout'),
    new AggregateError(
      [
        withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'),
        withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      ],
      '',
    ),
    new Error('wrapped', { cause: withCode('read ECONNRESET', 'ECONNRESET') }),
  ]) {
    assert.equal(isDatabaseUnavailable(err), true, err.message);
  }
});

test('isDatabaseUnavailable: not for SQLite busy, constraint violations, SQL mistakes or anything else', () => {
  for (const err of [
    withCode('database is locked', 'SQLITE_BUSY'),
    withCode('duplicate key value violates unique constraint', '23505'),
    withCode('syntax error at or near "selec"', '42601'),
    withCode('password authentication failed for user "svc"', '28P01'),
    new Error('something else'),
    'ECONNREFUSED',
    undefined,
  ]) {
    assert.equal(isDatabaseUnavailable(err), false, String(err));
  }
});

test('the two timeouts are told apart', () => {
  assert.equal(isQueryTimeout(new Error('Query read timeout')), true);
  assert.equal(isQueryTimeout(new Error('Connection terminated due to connection timeout')), false);
  assert.equal(isConnectTimeout(new Error('Connection terminated due to connection timeout')), true);
  assert.equal(isConnectTimeout(new Error('Query read timeout')), false);
});

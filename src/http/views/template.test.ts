// compileTemplate refuses a shape whose markers did not come through exactly as expected.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTemplate, fillTemplate, slot } from './template.ts';

test('a template fills its slots in order, repeated slots included', () => {
  const t = compileTemplate(`<a title="${slot('x')}">${slot('y')}</a>${slot('x')}`, ['x', 'y', 'x']);
  assert.equal(fillTemplate(t, { x: '1', y: '2' }), '<a title="1">2</a>1');
});

test('a marker that went missing, came out twice, or was cut in half is refused', () => {
  assert.throws(() => compileTemplate(`<a>${slot('x')}</a>`, ['x', 'y']), /markers/);
  assert.throws(() => compileTemplate(`<a>${slot('x')}${slot('x')}</a>`, ['x']), /markers/);
  assert.throws(() => compileTemplate(`<a>\u0001x</a>`, ['x']), /markers/);
});

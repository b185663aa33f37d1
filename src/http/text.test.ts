import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasControlCharacters, ID_PATTERN, isId } from './text.ts';

test('every C0 control and DEL counts; tab never does; CR and LF only without newlines', () => {
  for (let code = 0; code <= 0x1f; code++) {
    const ch = String.fromCharCode(code);
    const newline = ch === '\n' || ch === '\r';
    assert.equal(hasControlCharacters(`a${ch}b`), ch !== '\t', `U+${code.toString(16).padStart(4, '0')}`);
    assert.equal(
      hasControlCharacters(`a${ch}b`, { newlines: true }),
      ch !== '\t' && !newline,
      `U+${code.toString(16).padStart(4, '0')} with newlines`,
    );
  }
  assert.equal(hasControlCharacters('a\u007fb'), true);
  assert.equal(hasControlCharacters('plain text, ünïcode, emoji 🙂 and a space'), false);
  assert.equal(hasControlCharacters(''), false);
});

test("ids are the app's own alphabet, 1 to 64 characters", () => {
  assert.ok(isId('AAAAAAAAAAAAAAAAAAAAAA') && isId('a-b_c') && isId('x'.repeat(64)));
  for (const bad of ['', 'x'.repeat(65), 'a b', 'a.b', 'a\u0000', '\u0000', 'é', 'a/b', undefined, null])
    assert.equal(isId(bad), false, String(bad));
  assert.equal(ID_PATTERN.test('a\nb'), false, 'no multiline match');
});

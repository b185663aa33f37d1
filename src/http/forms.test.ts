import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import type { Ctx } from './env.ts';
import { CONTROL_CHARACTERS_MESSAGE, idField, parseForm, type FormOptions } from './forms.ts';

/** Just enough of a context for parseForm: the parsed form. */
function parse<S extends z.ZodType>(schema: S, body: string, options?: FormOptions) {
  const form = new URLSearchParams(body);
  return parseForm({ get: () => form } as unknown as Ctx, schema, options);
}

const schema = z.object({ name: z.string().default(''), note: z.string().default(''), tags: z.array(z.string()) });

test('a control character in any field is refused beside that field, not echoed, before the schema runs', () => {
  for (const ch of ['%00', '%01', '%1B', '%7F', '%0A', '%0D']) {
    const result = parse(schema, `_csrf=t&name=ok&note=a${ch}b&tags=x`, { multi: ['tags'] });
    assert.deepEqual(
      result,
      {
        ok: false,
        errors: { note: CONTROL_CHARACTERS_MESSAGE },
        values: { name: 'ok', note: '', tags: 'x' },
        control: true,
      },
      ch,
    );
  }
  const inArray = parse(schema, 'tags=x&tags=%00', { multi: ['tags'] });
  assert.equal(!inArray.ok && inArray.errors.tags, CONTROL_CHARACTERS_MESSAGE);
});

test('tab is always allowed; line breaks only in fields that opt in', () => {
  assert.deepEqual(parse(schema, 'name=a%09b', { multi: ['tags'] }), {
    ok: true,
    data: { name: 'a\tb', note: '', tags: [] },
  });
  assert.deepEqual(parse(schema, 'note=line%0D%0Aline', { multi: ['tags'], newlines: ['note'] }), {
    ok: true,
    data: { name: '', note: 'line\r\nline', tags: [] },
  });
  const notOptedIn = parse(schema, 'name=line%0Aline', { multi: ['tags'], newlines: ['note'] });
  assert.equal(!notOptedIn.ok && notOptedIn.errors.name, CONTROL_CHARACTERS_MESSAGE);
  const nulStill = parse(schema, 'note=a%00b', { multi: ['tags'], newlines: ['note'] });
  assert.equal(!nulStill.ok && nulStill.errors.note, CONTROL_CHARACTERS_MESSAGE);
});

test('a field name with a control character is dropped; schema errors say control: false', () => {
  assert.deepEqual(parse(z.object({ id: z.string().optional() }), 'a%00b=1'), { ok: true, data: {} });
  const ids = z.object({ id: idField('Choose one.') });
  assert.deepEqual(parse(ids, 'id=a%20b'), {
    ok: false,
    errors: { id: 'Choose one.' },
    values: { id: 'a b' },
    control: false,
  });
  assert.deepEqual(parse(ids, ''), { ok: false, errors: { id: 'Choose one.' }, values: {}, control: false });
  assert.deepEqual(parse(ids, 'id=AAAA-_z9'), { ok: true, data: { id: 'AAAA-_z9' } });
});

// The shared form API: a form with an id anchors its action, summarises its errors and ties each control to them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Checkbox, CsrfContext, Field, Form, Select } from './components.tsx';

async function html(node: unknown): Promise<string> {
  return (await (node as Promise<string>)).toString();
}

test('a form with an id and errors: a focused summary linking to each field, fields tied to hint and error', async () => {
  const out = await html(
    <CsrfContext.Provider value="tok">
      <Form
        action="/settings/channels"
        id="channel-create"
        errors={{ url: 'Enter an https URL.', kind: 'Pick one.', _form: 'Nothing saved.' }}
      >
        <Field label="URL" name="url" hint="Must be https." />
        <Select label="Kind" name="kind" options={[['a', 'A']]} />
        <Field label="Name" name="name" />
      </Form>
    </CsrfContext.Provider>,
  );
  assert.match(
    out,
    /<form method="post" action="\/settings\/channels" id="channel-create"><input type="hidden" name="_csrf" value="tok"\/>/,
  );
  assert.match(
    out,
    /<div class="error-summary" role="alert" aria-labelledby="channel-create-summary" tabindex="-1" autofocus=""><h2 id="channel-create-summary">There are 3 problems<\/h2>/,
  );
  assert.match(out, /<li><a href="#channel-create-url">Enter an https URL.<\/a><\/li>/);
  assert.match(out, /<li><a href="#channel-create-kind">Pick one.<\/a><\/li>/);
  assert.match(out, /<li>Nothing saved.<\/li>/);
  assert.match(
    out,
    /<div class="field has-error"><label for="channel-create-url">URL<\/label><input id="channel-create-url" name="url" type="text" aria-invalid="true" aria-describedby="channel-create-url-hint channel-create-url-error"\/>/,
  );
  assert.match(
    out,
    /<p class="hint" id="channel-create-url-hint">Must be https.<\/p><p class="error" id="channel-create-url-error">Enter an https URL.<\/p>/,
  );
  assert.match(
    out,
    /<select id="channel-create-kind" name="kind" aria-invalid="true" aria-describedby="channel-create-kind-error">/,
  );
  assert.match(
    out,
    /<div class="field"><label for="channel-create-name">Name<\/label><input id="channel-create-name" name="name" type="text"\/>/,
  );
});

test('an explicit error prop wins over the form map; a box with its own value gets its own id', async () => {
  const out = await html(
    <Form action="/x" id="f" errors={{ a: 'from map' }}>
      <Field label="A" name="a" error="explicit" />
      <Checkbox label="one" name="classes" value="one" />
      <Checkbox label="two" name="classes" value="two" />
      <Checkbox label="Enabled" name="enabled" value="on" />
    </Form>,
  );
  assert.match(out, /<p class="error" id="f-a-error">explicit<\/p>/);
  assert.match(out, /id="f-classes-one"/);
  assert.match(out, /id="f-classes-two"/);
  assert.match(out, /id="f-enabled"/);
});

test('without an id a form behaves as before: plain action, no summary, fresh control ids', async () => {
  const out = await html(
    <Form action="/logout" errors={{ a: 'x' }}>
      <Field label="A" name="a" />
    </Form>,
  );
  assert.match(out, /<form method="post" action="\/logout">/);
  assert.doesNotMatch(out, /error-summary|aria-invalid/);
  assert.match(out, /<input id="f-a-\d+" name="a" type="text"\/>/);
});

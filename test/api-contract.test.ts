// The OpenAPI 3.1 document at /api/openapi.json: valid as OpenAPI 3.1, public, and in step with the routes. (Every
// API test checks its answers against the document through test/helpers/api.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createApi } from '../src/api.ts';
import { buildTestApp } from './helpers/app.ts';
import { openApiDocument } from './helpers/api.ts';
import { createTestDatabase } from './helpers/db.ts';

const t = buildTestApp(await createTestDatabase('sqlite'));
const doc = await openApiDocument(t);

/** "METHOD /path" per operation, in Hono's `:param` form. */
function documented(): string[] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`),
  );
}

/** Every API route the app serves, but the document itself. */
function served(): string[] {
  const routes = createApi(t.deps).routes.filter(
    (r) => r.method !== 'ALL' && r.path.startsWith('/api/') && r.path !== '/api/openapi.json',
  );
  return [...new Set(routes.map((r) => `${r.method} ${r.path}`))];
}

test('the document is valid OpenAPI 3.1 and is served without a token', async () => {
  assert.equal(doc.openapi, '3.1.0');
  const result = await new Validator().validate(doc);
  assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
  const res = await t.app.request('http://localhost/api/openapi.json');
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
});

test('every route under /api/ is in the document, and every operation in the document is served', () => {
  assert.deepEqual(documented().sort(), served().sort());
  assert.ok(served().length >= 3);
});

test('every operation needs the bearer token and documents 401 and 429 as problems, and writes document 403', () => {
  assert.deepEqual(doc.components.securitySchemes.token, {
    type: 'http',
    scheme: 'bearer',
    description: doc.components.securitySchemes.token.description,
  });
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const name = `${method.toUpperCase()} ${path}`;
      assert.deepEqual(op.security, [{ token: [] }], name);
      for (const status of ['401', '429', ...(method === 'get' ? [] : ['403'])]) {
        assert.ok(op.responses[status]?.content?.['application/problem+json'], `${name} documents ${status}`);
      }
      assert.ok(op.summary && op.tags?.length, `${name} has a summary and a tag`);
    }
  }
});

test('accounts and /api/me name their second factors by kind only, never a credential or its key', () => {
  const kinds = { type: 'array', items: { type: 'string', enum: ['totp', 'passkey'] } };
  for (const name of ['Account', 'AccountDetail', 'Me']) {
    const schema = doc.components.schemas[name];
    const { description: _d, example: _e, ...shape } = schema.properties.second_factors;
    assert.deepEqual(shape, kinds, name);
    assert.ok(schema.required.includes('second_factors'), `${name} always answers it`);
  }
  const text = JSON.stringify(doc);
  for (const field of ['public_key', 'credential_id', 'publicKey', 'credentialId'])
    assert.ok(!text.includes(`"${field}"`), `no ${field} in any answer`);
});

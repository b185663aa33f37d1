// Text with a NUL (which PostgreSQL cannot store) in every input of every API operation, taken from the OpenAPI
// document so that a route added later is covered too: each path parameter, each query parameter, and each string in
// a request body in turn. The answer is a 4xx problem, never a 5xx (and, for bodies, never a success).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from './helpers/app.ts';
import { assertProblem, buildApiUser, openApiDocument } from './helpers/api.ts';
import { forEachDialect } from './helpers/db.ts';

const NUL = 'a\u0000b';

/** A schema with its $ref followed into the document's components. */
function resolve(doc: any, schema: any): any {
  return schema?.$ref ? resolve(doc, doc.components.schemas[schema.$ref.split('/').pop()]) : schema;
}

/** A plausible value for `schema`, with NUL text in every string. */
function sample(doc: any, schema: any): unknown {
  const s = resolve(doc, schema) ?? {};
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  if (s.anyOf || s.oneOf)
    return sample(
      doc,
      (s.anyOf ?? s.oneOf).find((x: any) => resolve(doc, x)?.type !== 'null'),
    );
  if (type === 'object')
    return Object.fromEntries(Object.entries<any>(s.properties ?? {}).map(([k, v]) => [k, sample(doc, v)]));
  if (type === 'array') return [sample(doc, s.items)];
  if (type === 'integer' || type === 'number') return s.minimum ?? 1;
  if (type === 'boolean') return true;
  return NUL;
}

forEachDialect((getDb) => {
  test('a NUL in any path parameter, query parameter or body string of any operation is a 4xx problem, never a 5xx', async () => {
    const t = buildTestApp(getDb());
    const doc = await openApiDocument(t);
    const { api, account } = await buildApiUser(t, 'admin');
    let sent = 0;
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const params: any[] = op.parameters ?? [];
        const pathOf = (nulIn?: string) =>
          template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(name === nulIn ? NUL : account.id));
        const cases: { path: string; body?: unknown; what: string }[] = [];
        for (const p of params.filter((x) => x.in === 'path'))
          cases.push({ path: pathOf(p.name), what: `path ${p.name}` });
        for (const p of params.filter((x) => x.in === 'query' && resolve(doc, x.schema)?.type !== 'integer')) {
          cases.push({ path: `${pathOf()}?${new URLSearchParams({ [p.name]: NUL })}`, what: `query ${p.name}` });
        }
        const bodySchema = op.requestBody?.content?.['application/json']?.schema;
        if (bodySchema) cases.push({ path: pathOf(), body: sample(doc, bodySchema), what: 'body' });
        for (const c of cases) {
          const res = await api.request(method.toUpperCase(), c.path, c.body as any);
          const name = `${method.toUpperCase()} ${template} (${c.what}): ${res.status} ${res.text.slice(0, 200)}`;
          assert.ok(res.status < 500, name);
          if (res.status >= 400) assertProblem(res, res.status);
          else
            assert.ok(!JSON.stringify(c.body ?? '').includes('\\u0000'), `a body with NUL text was accepted: ${name}`);
          sent += 1;
        }
      }
    }
    assert.ok(sent >= 40, `sent ${sent} requests`);
    assert.equal(t.logs.filter((l) => l.includes('"level":50')).length, 0, 'nothing failed inside');
  });
});

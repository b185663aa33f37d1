// The JSON API from a test's side: token holders (buildApiUser) and a client whose every answer is checked against the
// service's own OpenAPI document (status documented for the operation, body valid against its schema), so each API
// test is also a contract test.
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createToken } from '../../src/features/tokens/tokens.service.ts';
import type { TestApp } from './app.ts';
import { buildAccount } from './factories.ts';

/** An answer from the API: status, headers, the raw text and, for JSON bodies, the parsed value. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  // Tests read fields freely; the contract check has already validated the shape.
  body: any;
}

type Json = Record<string, unknown> | unknown[] | string | number | boolean | null;

/**
 * Options of one request: extra headers, a raw body (sent as is), or no contract check (for deliberately odd answers).
 */
export interface ApiRequestOptions {
  headers?: Record<string, string>;
  raw?: string;
  address?: string;
}

/** A client presenting `token` (or none) to /api/. */
export class ApiClient {
  constructor(
    private readonly t: TestApp,
    readonly token: string | undefined,
  ) {}

  async request(method: string, path: string, body?: Json, options: ApiRequestOptions = {}): Promise<ApiResponse> {
    const headers = new Headers(options.headers);
    if (this.token !== undefined && !headers.has('authorization')) headers.set('authorization', `Bearer ${this.token}`);
    let payload: string | undefined = options.raw;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
    const res = await this.t.app.request(
      `http://localhost${path}`,
      { method, headers, body: payload },
      { incoming: { socket: { remoteAddress: options.address ?? '127.0.0.1' } } },
    );
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const parsed = /json/.test(type) && text !== '' ? JSON.parse(text) : undefined;
    await checkContract(this.t, method, path, res.status, type, parsed);
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  get(path: string, options?: ApiRequestOptions) {
    return this.request('GET', path, undefined, options);
  }
  post(path: string, body?: Json, options?: ApiRequestOptions) {
    return this.request('POST', path, body, options);
  }
  put(path: string, body?: Json, options?: ApiRequestOptions) {
    return this.request('PUT', path, body, options);
  }
  patch(path: string, body?: Json, options?: ApiRequestOptions) {
    return this.request('PATCH', path, body, options);
  }
  delete(path: string, options?: ApiRequestOptions) {
    return this.request('DELETE', path, undefined, options);
  }
}

/** An account of `role` with a fresh token (read-only when asked) and a client presenting it. */
export async function buildApiUser(
  t: TestApp,
  role: 'admin' | 'viewer',
  options: { username?: string; readOnly?: boolean } = {},
) {
  const account = await buildAccount(t, { role, ...(options.username ? { username: options.username } : {}) });
  const { id: tokenId, token } = await createToken(t.deps, account.id, {
    name: 'test',
    expiry: 'never',
    readOnly: options.readOnly,
  });
  return { account, token, tokenId, api: new ApiClient(t, token) };
}

/** The standard problem shape, checked beyond the schema: the type's prefix and the status echoed. */
export function assertProblem(res: ApiResponse, status: number, type?: string): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(res.body.status, status);
  assert.match(res.body.type, /^urn:svc:problem:[a-z0-9-]+$/);
  if (type !== undefined) assert.equal(res.body.type, `urn:svc:problem:${type}`);
  assert.equal(typeof res.body.detail, 'string');
}

// --- the contract check -------------------------------------------------------------------------------------------

interface Operation {
  pattern: RegExp;
  method: string;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
  pointer: string;
}

let contract: Promise<{ ajv: Ajv2020; operations: Operation[] }> | undefined;

/** The document served at /api/openapi.json, loaded once per test file (it does not depend on the database). */
export async function openApiDocument(t: TestApp): Promise<any> {
  const res = await t.app.request('http://localhost/api/openapi.json');
  assert.equal(res.status, 200);
  return res.json();
}

async function loadContract(t: TestApp) {
  const doc = await openApiDocument(t);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc, 'openapi.json');
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    const source = path
      .split('/')
      .map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const [method, op] of Object.entries<any>(item)) {
      const escaped = path.replaceAll('~', '~0').replaceAll('/', '~1');
      operations.push({
        pattern: new RegExp(`^${source}$`),
        method: method.toUpperCase(),
        responses: op.responses ?? {},
        pointer: `openapi.json#/paths/${escaped}/${method}`,
      });
    }
  }
  // A literal path segment wins over a parameter (/api/messages/read before /api/messages/{id}).
  const parameters = (o: Operation) => o.pattern.source.split('[^/]+').length;
  operations.sort((a, b) => parameters(a) - parameters(b));
  return { ajv, operations };
}

/**
 * Fails the test when an /api/ answer is not what the document says: the operation must be documented, the status
 * must be listed for it, and a JSON body must validate against the listed schema for its media type. Answers the gate
 * gives before any route (401, 403, 404, 405, 429 for paths or methods that do not exist) must still be problems.
 */
async function checkContract(
  t: TestApp,
  method: string,
  url: string,
  status: number,
  contentType: string,
  body: unknown,
): Promise<void> {
  contract ??= loadContract(t);
  const { ajv, operations } = await contract;
  const path = url.split('?')[0]!;
  if (path === '/api/openapi.json') return;
  const lookup = method === 'HEAD' ? 'GET' : method;
  const op = operations.find((o) => o.method === lookup && o.pattern.test(path));
  const mediaType = contentType.split(';')[0]!.trim();
  if (!op) {
    assert.ok(status >= 400, `${method} ${path} answered ${status} but is not in the OpenAPI document`);
    assert.equal(
      mediaType,
      'application/problem+json',
      `${method} ${path} (undocumented) answered ${status} with ${contentType}`,
    );
    const validate = ajv.getSchema('openapi.json#/components/schemas/Problem')!;
    assert.ok(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`);
    return;
  }
  const response = op.responses[String(status)];
  assert.ok(
    response,
    `${method} ${path} answered ${status}, which the document does not list for ${op.method} ${op.pattern.source} (lists ${Object.keys(op.responses).join(', ')})`,
  );
  if (method === 'HEAD' || status === 204) return;
  const media = response.content?.[mediaType];
  assert.ok(
    media,
    `${method} ${path} ${status} answered ${mediaType || 'no content type'}; the document lists ${Object.keys(response.content ?? {}).join(', ') || 'no content'}`,
  );
  const pointer = `${op.pointer}/responses/${status}/content/${mediaType.replaceAll('~', '~0').replaceAll('/', '~1')}/schema`;
  const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
  assert.ok(
    validate(body),
    `${method} ${path} ${status} does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
  );
}

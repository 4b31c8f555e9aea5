/**
 * Checks an HTTP response against the OpenAPI document (src/api/openapi.ts), so every response the
 * API tests receive is also a test of the document. Shared: any test of an API
 * route calls `expectMatchesOpenApi(method, path, response)` or fetches through `fetchChecked`.
 *
 * What is checked: the path and method are documented (an undocumented path must be a 404 and a
 * known path with another method a 405, both problem+json); the status is listed for the operation;
 * a documented body has the documented media type and validates against its schema (ajv, JSON Schema
 * 2020-12 as OpenAPI 3.1 uses); a response documented without a body has none; required headers
 * (Retry-After, WWW-Authenticate) are present.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import assert from 'node:assert/strict';
import { OPENAPI_DOCUMENT, type OpenApiOperation, type OpenApiResponse } from '../../src/api/openapi.js';

export interface CheckedResponse {
  status: number;
  headers: Headers | Record<string, string | undefined>;
  /** Parsed JSON, text, or null/undefined/'' when the response had no body. */
  body: unknown;
}

const DOCUMENT_ID = 'https://smsgate.invalid/openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addFormat('date-time', { validate: (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)) });
ajv.addFormat('int32', { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 });
ajv.addSchema({ ...OPENAPI_DOCUMENT, $id: DOCUMENT_ID });
const validators = new Map<string, ValidateFunction>();

function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** The documented path template matching a concrete path, e.g. /v1/campaign/{id}. */
function templateOf(path: string): string | undefined {
  const bare = path.split('?')[0]!;
  for (const template of Object.keys(OPENAPI_DOCUMENT.paths)) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(bare)) return template;
  }
  return undefined;
}

function header(headers: CheckedResponse['headers'], name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

function resolveResponse(response: OpenApiResponse): { response: OpenApiResponse; pointer: string | undefined } {
  const reference = (response as unknown as { $ref?: string }).$ref;
  if (reference === undefined) return { response, pointer: undefined };
  const name = reference.split('/').at(-1)!;
  return { response: OPENAPI_DOCUMENT.components.responses[name]!, pointer: `/components/responses/${escapePointer(name)}` };
}

function isEmptyBody(body: unknown): boolean {
  return body === null || body === undefined || body === '';
}

function checkProblem(status: number, response: CheckedResponse, why: string): void {
  assert.match(header(response.headers, 'content-type') ?? '', /^application\/problem\+json/, `${why}: problem+json`);
  const validate = validatorAt('/components/schemas/Problem');
  assert.ok(validate(response.body), `${why}: ${ajv.errorsText(validate.errors)}`);
  assert.equal((response.body as { status?: unknown }).status, status, `${why}: problem status`);
}

export function expectMatchesOpenApi(method: string, path: string, response: CheckedResponse): void {
  const template = templateOf(path);
  const what = `${method.toUpperCase()} ${path} -> ${response.status}`;
  if (template === undefined) {
    assert.equal(response.status, 404, `${what}: the path is not in the OpenAPI document, so only 404 may answer it`);
    checkProblem(404, response, what);
    return;
  }
  const operation: OpenApiOperation | undefined = OPENAPI_DOCUMENT.paths[template]?.[method.toLowerCase() as 'get' | 'post'];
  if (operation === undefined) {
    assert.ok([404, 405].includes(response.status), `${what}: the method is not documented for ${template}`);
    checkProblem(response.status, response, what);
    return;
  }
  const documented = operation.responses[String(response.status)];
  assert.ok(documented !== undefined, `${what}: status not documented (${Object.keys(operation.responses).join(', ')})`);
  const operationPointer = `/paths/${escapePointer(template)}/${method.toLowerCase()}/responses/${response.status}`;
  const resolved = resolveResponse(documented!);
  const pointer = resolved.pointer ?? operationPointer;
  for (const [name, spec] of Object.entries(resolved.response.headers ?? {})) {
    if (spec.required === true) assert.ok(header(response.headers, name) !== undefined, `${what}: header ${name} is required`);
  }
  const content = resolved.response.content;
  if (content === undefined) {
    assert.ok(isEmptyBody(response.body), `${what}: documented without a body`);
    return;
  }
  const contentType = (header(response.headers, 'content-type') ?? '').split(';')[0]!.trim();
  assert.ok(Object.keys(content).includes(contentType), `${what}: content type ${contentType} is not one of ${Object.keys(content).join(', ')}`);
  const validate = validatorAt(`${pointer}/content/${escapePointer(contentType)}/schema`);
  assert.ok(validate(response.body), `${what}: ${ajv.errorsText(validate.errors)}`);
}

/** fetch, then the response checked against the document; the returned Response is unread. */
export async function fetchChecked(url: string | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const copy = response.clone();
  const text = await copy.text();
  const type = copy.headers.get('content-type') ?? '';
  const body = text === '' ? null : /json/.test(type) ? (JSON.parse(text) as unknown) : text;
  const { pathname, search } = new URL(String(url));
  expectMatchesOpenApi(init?.method ?? 'GET', pathname + search, { status: response.status, headers: response.headers, body });
  return response;
}

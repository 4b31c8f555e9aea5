/**
 * The OpenAPI 3.1 document is valid for a third-party parser, describes every
 * SPEC.md endpoint and GET /v1/inbound, is served at GET /openapi.json without a token, and the
 * response checker the API tests use refuses responses the document does not allow.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENT } from '../../src/api/openapi.js';
import { startApiFixture, type ApiFixture } from '../support/api-fixture.js';
import { expectMatchesOpenApi, fetchChecked } from '../support/openapi-check.js';

let fixture: ApiFixture;
beforeAll(async () => {
  fixture = await startApiFixture({ startProcessor: false });
});
afterAll(async () => {
  await fixture.close();
});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document for @apidevtools/swagger-parser', async () => {
    const api = await SwaggerParser.validate(structuredClone(OPENAPI_DOCUMENT) as never);
    expect((api as { openapi?: string }).openapi).toBe('3.1.0');
  });

  it('describes every SPEC.md endpoint, GET /v1/inbound and this document, with their security', () => {
    const operations = Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual([
      'GET /api/v2/senderlist', 'GET /health', 'GET /openapi.json', 'GET /v1/campaign/{id}', 'GET /v1/inbound',
      'POST /auth/token', 'POST /legacy/auth/token', 'POST /v1/campaign',
    ]);
    expect(OPENAPI_DOCUMENT.paths['/v1/campaign']?.post?.security).toEqual([{ personalAccessToken: [] }, { accessToken: [] }]);
    expect(OPENAPI_DOCUMENT.paths['/health']?.get?.security).toEqual([]);
    expect(Object.keys(OPENAPI_DOCUMENT.components.securitySchemes)).toEqual(expect.arrayContaining(['personalAccessToken', 'accessToken', 'legacyAccessToken']));
    const inbound = OPENAPI_DOCUMENT.paths['/v1/inbound']?.get;
    expect(inbound?.parameters?.map((p) => p.name)).toEqual(['since', 'limit']);
    expect(Object.keys(inbound?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
  });

  it('is served at GET /openapi.json on the API port without a token', async () => {
    const response = await fetchChecked(`${fixture.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
  });
});

describe('the response checker', () => {
  it('accepts what the document allows and refuses what it does not', () => {
    const headers = { 'content-type': 'application/json' };
    expectMatchesOpenApi('POST', '/v1/campaign', { status: 202, headers, body: { id: '0b9b4f1e-4c1a-4d1e-9a55-6a3f5c2b1d00', message: 'Campaign received to be processed' } });
    expect(() => expectMatchesOpenApi('POST', '/v1/campaign', { status: 202, headers, body: { id: 'not-a-uuid', message: 'Campaign received to be processed' } })).toThrow();
    expect(() => expectMatchesOpenApi('POST', '/v1/campaign', { status: 201, headers, body: {} })).toThrow();
    expect(() => expectMatchesOpenApi('POST', '/v1/campaign', { status: 401, headers: {}, body: null })).toThrow(/WWW-Authenticate/);
    expect(() => expectMatchesOpenApi('GET', '/v1/campaign/0b9b4f1e-4c1a-4d1e-9a55-6a3f5c2b1d00', { status: 200, headers, body: { totalSent: -1, delivered: 0, undelivered: 0, pending: 0 } })).toThrow();
    expectMatchesOpenApi('GET', '/v1/inbound?limit=2', { status: 200, headers, body: { messages: [{ id: '1', from: '353861234567', to: '50123', text: 'STOP', receivedAt: '2026-01-15T12:00:00.000Z', incomplete: false }], next: null } });
    expect(() => expectMatchesOpenApi('GET', '/v1/inbound', { status: 200, headers, body: { messages: [{ id: '1' }], next: null } })).toThrow();
    expect(() => expectMatchesOpenApi('GET', '/nowhere', { status: 200, headers, body: {} })).toThrow();
  });
});

/**
 * docs/reference/http-api.md has a section for every operation of the OpenAPI document the gateway
 * serves (src/api/openapi.ts), and that section names every response status the document lists.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENT } from '../../src/api/openapi.js';

/** `### \`GET /v1/inbound\`` -> its text up to the next heading of the same or a higher level. */
function sections(doc: string): Map<string, string> {
  const found = new Map<string, string>();
  const parts = doc.split(/^### /m).slice(1);
  for (const part of parts) {
    const heading = /^`([A-Z]+ [^`]+)`/.exec(part);
    if (heading?.[1] !== undefined) found.set(heading[1], part.split(/^## /m)[0] ?? part);
  }
  return found;
}

describe('docs/reference/http-api.md', () => {
  const doc = readFileSync('docs/reference/http-api.md', 'utf8');
  const byOperation = sections(doc);
  const operations = Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, statuses: Object.keys(operation.responses) })),
  );

  it('has a section for every endpoint of the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(8);
    const missing = operations.filter((op) => !byOperation.has(op.name)).map((op) => op.name);
    expect(missing, `endpoints missing from docs/reference/http-api.md: ${missing.join(', ')}`).toEqual([]);
  });

  it('lists every response status of each endpoint in its section', () => {
    const missing = operations.flatMap((op) =>
      op.statuses.filter((status) => !new RegExp(`^\\| ${status} \\|`, 'm').test(byOperation.get(op.name) ?? '')).map((status) => `${op.name} ${status}`),
    );
    expect(missing, `statuses missing: ${missing.join(', ')}`).toEqual([]);
  });

  it('documents the webhook signature and event id headers', () => {
    for (const header of ['X-Signature', 'X-Event-Id']) expect(doc).toContain(header);
  });
});

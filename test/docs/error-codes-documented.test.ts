/** docs/reference/statuses-and-errors.md, the one glossary, names every code of src/common/error-codes.ts. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/common/error-codes.js';

describe('docs/reference/statuses-and-errors.md', () => {
  it('has a row for every error code', () => {
    const doc = readFileSync('docs/reference/statuses-and-errors.md', 'utf8');
    const missing = ERROR_CODES.filter((code) => !doc.includes(`| \`${code}\` |`));
    expect(missing, `error codes missing: ${missing.join(', ')}`).toEqual([]);
  });
});

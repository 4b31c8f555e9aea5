/**
 * SQL stays inside src/store/. Other modules call store functions; none prepares
 * a statement of its own (a query outside the store is a copy of the schema the schema test cannot see).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
const STORE = join(SRC, 'store');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === STORE ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('SQL outside src/store', () => {
  it('no module outside src/store prepares or executes SQL', () => {
    const found: string[] = [];
    for (const file of sourceFiles(SRC)) {
      readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
        // A statement prepared on a connection, or SQL text: either is a query written outside the store.
        if (/\bdb\.(prepare|exec)\(|\b(SELECT|INSERT INTO|DELETE FROM)\s|\bUPDATE \w+ SET\b/.test(line)) found.push(`${relative(SRC, file)}:${index + 1}`);
      });
    }
    expect(found).toEqual([]);
  });
});

/**
 * Config/ imports no feature module (the composition root, src/gateway/config.ts,
 * hands it the sections and the transport registry), and the transport types are listed once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { TRANSPORT_MODULES, TRANSPORT_TYPES } from '../../src/transports/registry.js';

const CONFIG_DIR = join(import.meta.dirname, '../../src/config');
// Shared kernel modules (src/common) config/ may use: they import nothing of the features either.
const KERNEL = new Set(['../common/errors.js', '../common/secret-text.js']);

describe('config/ dependencies', () => {
  it('imports nothing outside src/config but the shared error type', () => {
    const outward: string[] = [];
    for (const file of readdirSync(CONFIG_DIR).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(CONFIG_DIR, file), 'utf8');
      for (const match of text.matchAll(/from '(\.\.\/[^']+)'/g)) {
        const target = match[1] as string;
        if (!KERNEL.has(target)) outward.push(`${file} -> ${target}`);
      }
    }
    expect(outward).toEqual([]);
  });
});

describe('transport registry', () => {
  it('gives each type once, and the config accepts exactly those types', () => {
    expect(new Set(TRANSPORT_TYPES).size).toBe(TRANSPORT_MODULES.length);
    expect(() => resolveConfigFromObject({ transports: [{ name: 'x', type: 'carrier-pigeon' }] }, 'c.json', {})).toThrow(
      `c.json: transports[0].type: must be one of ${TRANSPORT_TYPES.map((t) => JSON.stringify(t)).join(', ')}`,
    );
  });

  it('validates an entry against its own module schema', () => {
    // The simulator's schema is closed: a field only SMPP has is an unknown key there.
    expect(() => resolveConfigFromObject({ transports: [{ name: 'sim', type: 'simulator', systemId: 'a' }] }, 'c.json', {})).toThrow(
      'c.json: transports[0].systemId: unknown key',
    );
  });
});

/**
 * docs/reference/configuration.md names every key the config file may hold. The keys are read from
 * the schema the loader really compiles: src/config/schema.ts builds it (buildConfigSchema) from
 * the sections the composition root hands in, so the test records what buildConfigSchema returns
 * when the real loader runs, and adds each registered transport type's own entry schema.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

const built = vi.hoisted(() => ({ schemas: [] as object[] }));

vi.mock('../../src/config/schema.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/config/schema.js')>();
  return {
    ...original,
    buildConfigSchema: (parts: Parameters<typeof original.buildConfigSchema>[0]): object => {
      const schema = original.buildConfigSchema(parts);
      built.schemas.push(schema);
      return schema;
    },
  };
});

const { resolveConfigFromObject } = await import('../../src/gateway/config.js');
const { TRANSPORT_MODULES } = await import('../../src/transports/registry.js');

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/** Dotted paths of every property, arrays of objects as `[]` (`transports[].devices[].path`). */
export function schemaKeyPaths(schema: Schema, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    paths.push(path);
    paths.push(...schemaKeyPaths(child, path));
    if (child.items?.properties !== undefined) paths.push(...schemaKeyPaths(child.items, `${path}[]`));
  }
  return paths;
}

function configKeyPaths(): string[] {
  // The loader compiles its schema on first use: one valid (empty) config makes it.
  resolveConfigFromObject({}, 'docs-test.json', {});
  const root = built.schemas[0] as Schema | undefined;
  if (root === undefined) throw new Error('buildConfigSchema was not called by the loader');
  const transportPaths = TRANSPORT_MODULES.flatMap((module) => schemaKeyPaths(module.schema as Schema, 'transports[]'));
  return [...new Set([...schemaKeyPaths(root), ...transportPaths])].sort();
}

describe('docs/reference/configuration.md', () => {
  const doc = readFileSync('docs/reference/configuration.md', 'utf8');

  it('walks the real schema: sections of the composition root and every transport type', () => {
    const paths = configKeyPaths();
    // One key of each source the schema is built from, so an empty walk cannot pass.
    for (const key of ['database.url', 'auth.bruteForce.windowMs', 'engine.maxAttempts', 'admin.token', 'transports[].name',
      'transports[].reconnect.authFailureDelayMs', 'transports[].devices[].path', 'transports[].outcomes[].suffix', 'routes[].prefix']) {
      expect(paths).toContain(key);
    }
    expect(paths.length).toBeGreaterThan(90);
  });

  it('names every config key, in backticks', () => {
    const missing = configKeyPaths().filter((path) => !doc.includes(`\`${path}\``));
    expect(missing, `keys missing from docs/reference/configuration.md: ${missing.join(', ')}`).toEqual([]);
  });
});

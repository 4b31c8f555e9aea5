/**
 * The layers of src/ stay layers: no module imports, directly or through others, a module that
 * imports it back (ARCHITECTURE.md: arrows point inward), and no module sits in the tree that
 * nothing loads. Type-only imports count: erased at run time, a cycle of types still ties the
 * files into one layer.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCycle, importCycles, importGraph, importsBetween, unimported, unitGraph } from './import-graph.js';

const REPO = join(import.meta.dirname, '../..');
const SRC = join(REPO, 'src');

describe('src/ import graph', () => {
  const graph = importGraph(SRC);

  it('reads the whole tree', () => {
    // A parser that silently saw nothing would pass the cycle test: the tree has hundreds of modules.
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('src/transports/registry.ts')).toContain('src/transports/modem/module.ts');
  });

  it('has no import cycle', () => {
    const cycles = importCycles(graph);
    expect(cycles.map((cycle) => describeCycle(graph, cycle)).join('\n')).toBe('');
  });

  it('keeps the folders out of each other', () => {
    // Folders (and root files) that import each other, directly or round a loop. The composition
    // layer (src/gateway) imports the features; admin and api take what they need as types of their
    // own (src/admin/cluster-stats.ts, the api section's type from src/config), never the layer
    // that builds them. Listed exactly, so any tangle fails here with the imports that make it.
    const KNOWN: string[][] = [];
    const units = unitGraph(graph);
    const tangles = importCycles(units);
    const report = tangles.map((cycle) => `${describeCycle(units, cycle)}\n  by:\n${importsBetween(graph, cycle).map((line) => `    ${line}`).join('\n')}`).join('\n');
    expect(tangles, report).toEqual(KNOWN);
    // The engine, campaigns and webhooks ask for the node id (src/common/node-id.ts), not the cluster.
    expect(units.get('src/engine')).not.toContain('src/cluster');
    expect(units.get('src/campaigns')).not.toContain('src/cluster');
    expect(units.get('src/webhooks')).not.toContain('src/cluster');
    // Nothing but the command and the package entry imports the composition layer.
    const intoGateway = [...units].filter(([, targets]) => targets.includes('src/gateway')).map(([from]) => from);
    expect(intoGateway.sort()).toEqual(['src/cli', 'src/index.ts']);
  });

  it('keeps the transport contract innermost: transport.ts imports no transport, module or registry', () => {
    const outward = (graph.get('src/transports/transport.ts') ?? []).filter((target) => target.startsWith('src/transports/'));
    expect(outward).toEqual([]);
  });

  it('holds no module that nothing loads', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      main: string;
      bin: Record<string, string>;
      exports: Record<string, string | { default?: string }>;
    };
    const fromDist = (path: string): string => path.replace(/^\.?\/?dist\//, '').replace(/\.js$/, '.ts');
    const packageEntries = [pkg.main, ...Object.values(pkg.bin), ...Object.values(pkg.exports).map((e) => (typeof e === 'string' ? e : (e.default ?? '')))]
      .filter((path) => path.startsWith('./dist/src/') || path.startsWith('dist/src/'))
      .map(fromDist);
    const cliMain = readFileSync(join(SRC, 'cli/main.ts'), 'utf8');
    const loadedOtherwise = (file: string): boolean =>
      packageEntries.includes(file) ||
      // The CLI loads each command module by the name its command table gives.
      (file.startsWith('src/cli/commands/') && cliMain.includes(`'./commands/${basename(file, '.ts')}.js'`)) ||
      // Started as a worker thread by name (src/webhooks/sender-thread.ts, through src/common/worker-entry.ts).
      (file === 'src/webhooks/sender-worker.ts' && readFileSync(join(SRC, 'webhooks/sender-thread.ts'), 'utf8').includes("workerEntry(import.meta.url, 'sender-worker')")) ||
      // A transport folder's barrel: what embedders and the tests import a transport by.
      /^src\/transports\/[a-z]+\/index\.ts$/.test(file);
    expect(unimported(graph).filter((file) => !loadedOtherwise(file))).toEqual([]);
  });
});

describe('the cycle finder', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Writes files under <tmp>/src and returns its graph. */
  function tree(files: Record<string, string>): ReturnType<typeof importGraph> {
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-import-graph-'));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
      writeFileSync(join(dir, 'src', path), text);
    }
    return importGraph(join(dir, 'src'));
  }

  it('sees type-only imports, re-exports, lazy imports and import types, and names each cycle', () => {
    const graph = tree({
      'a/contract.ts': "import type { List } from '../b/registry.js';\nexport interface Thing { list: List }\n",
      'b/registry.ts': "export { make } from '../c/module.js';\nexport type List = string[];\n",
      'c/module.ts': "export const make = async () => (await import('./impl.js')).impl;\n",
      'c/impl.ts': "import type { Thing } from '../a/contract.js';\nexport const impl = (t: Thing) => t;\n",
      'd/self.ts': "export type Self = typeof import('./self.js');\n",
      'e/pkg.ts': "import { join } from 'node:path';\nimport { x } from '../../outside.js';\nexport const p = join(x);\n",
      'e/leaf.ts': 'export const leaf = 1;\n',
    });
    expect(importCycles(graph)).toEqual([['src/a/contract.ts', 'src/b/registry.ts', 'src/c/impl.ts', 'src/c/module.ts'], ['src/d/self.ts']]);
    expect(describeCycle(graph, ['src/a/contract.ts', 'src/b/registry.ts', 'src/c/impl.ts', 'src/c/module.ts'])).toBe(
      [
        'cycle of 4 file(s):',
        '  src/a/contract.ts -> src/b/registry.ts',
        '  src/b/registry.ts -> src/c/module.ts',
        '  src/c/impl.ts -> src/a/contract.ts',
        '  src/c/module.ts -> src/c/impl.ts',
      ].join('\n'),
    );
    // Between folders the loop is a -> b -> c -> a; a file importing itself is no folder tangle.
    expect(importCycles(unitGraph(graph))).toEqual([['src/a', 'src/b', 'src/c']]);
    expect(importsBetween(graph, ['src/a', 'src/b', 'src/c'])).toEqual([
      'src/a/contract.ts -> src/b/registry.ts',
      'src/b/registry.ts -> src/c/module.ts',
      'src/c/impl.ts -> src/a/contract.ts',
    ]);
    expect(graph.get('src/e/pkg.ts')).toEqual([]);
    expect(unimported(graph)).toEqual(['src/e/leaf.ts', 'src/e/pkg.ts']);
  });

  it('finds none once the contract stops importing the registry', () => {
    const graph = tree({
      'a/contract.ts': 'export interface Thing { list: string[] }\n',
      'b/registry.ts': "export { make } from '../c/module.js';\n",
      'c/module.ts': "export const make = async () => (await import('./impl.js')).impl;\n",
      'c/impl.ts': "import type { Thing } from '../a/contract.js';\nexport const impl = (t: Thing) => t;\n",
    });
    expect(importCycles(graph)).toEqual([]);
  });

  it('walks a chain deeper than the call stack', () => {
    const length = 20_000;
    const graph = new Map<string, string[]>(Array.from({ length }, (_, i) => [`f${i}`, [`f${(i + 1) % length}`]]));
    const cycles = importCycles(graph);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(length);
  });
});

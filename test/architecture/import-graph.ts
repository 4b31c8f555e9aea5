/**
 * The module graph of a TypeScript tree, read with the compiler's own parser, and its strongly
 * connected components (Tarjan). Used by the architecture tests: a component of more than one file
 * is an import cycle, which ties every file in it into one layer (ARCHITECTURE.md, "arrows point
 * inward").
 *
 * Every relative module specifier is an edge: `import` and `export ... from` (type-only ones too:
 * erased at run time, but a cycle of types still makes the layers one), `import('./x.js')` (a lazy
 * load is still a dependency), and `typeof import('./x.js')` type queries. Bare specifiers
 * (packages, node:) and targets outside the tree are not edges.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** File (path relative to the tree's parent, '/'-separated) -> the files it imports, sorted. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return tsFiles(path);
      return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
    });
}

/** The relative specifiers one source text names, in order of appearance. */
export function relativeSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let specifier: ts.Node | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) specifier = node.moduleSpecifier;
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) specifier = node.moduleReference.expression;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) specifier = node.argument.literal;
    if (specifier !== undefined && ts.isStringLiteralLike(specifier) && specifier.text.startsWith('.')) found.push(specifier.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Reads every .ts file under `treeDir` (declaration files aside) and links each to the files it imports. */
export function importGraph(treeDir: string): ImportGraph {
  const base = dirname(treeDir);
  const files = tsFiles(treeDir);
  const known = new Set(files);
  const name = (path: string): string => relative(base, path).split('\\').join('/');
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const specifier of relativeSpecifiers(file, readFileSync(file, 'utf8'))) {
      // NodeNext ESM: sources name the emitted '.js'; the module is the '.ts' beside it.
      const path = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      const target = known.has(path) ? path : known.has(join(path, 'index.ts')) ? join(path, 'index.ts') : null;
      if (target !== null) targets.add(name(target));
    }
    graph.set(name(file), [...targets].sort());
  }
  return graph;
}

/**
 * Tarjan's strongly connected components, iterative (no recursion limit on deep chains). Returns
 * only the cycles: components of two or more files, or one file importing itself; each sorted, and
 * the list sorted by its first file.
 */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; edge: number };
      const targets = graph.get(frame.node) ?? [];
      if (frame.edge < targets.length) {
        const target = targets[frame.edge++] as string;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || targets.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/** One cycle as text: each file with the files of the same cycle it imports. */
export function describeCycle(graph: ImportGraph, cycle: readonly string[]): string {
  const members = new Set(cycle);
  const lines = cycle.map((file) => `  ${file} -> ${(graph.get(file) ?? []).filter((t) => members.has(t)).join(', ')}`);
  return `cycle of ${cycle.length} file(s):\n${lines.join('\n')}`;
}

/** Files no other file of the graph imports. */
export function unimported(graph: ImportGraph): string[] {
  const imported = new Set([...graph.values()].flat());
  return [...graph.keys()].filter((file) => !imported.has(file));
}

/**
 * The graph of the tree's top-level units: each folder directly under the tree (with everything
 * below it) and each file at the tree's root. An edge A -> B says some file of A imports one of B;
 * a unit's imports of itself are left out, so a cycle here is a tangle between folders.
 */
export function unitGraph(graph: ImportGraph): ImportGraph {
  const unit = (file: string): string => file.split('/').slice(0, 2).join('/');
  const units = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = unit(file);
    const edges = units.get(from) ?? new Set<string>();
    units.set(from, edges);
    for (const target of targets) if (unit(target) !== from) edges.add(unit(target));
  }
  return new Map([...units].map(([from, edges]) => [from, [...edges].sort()]));
}

/** Every import from one unit of `units` into another, as 'file -> file' lines (the edges that make a unit cycle). */
export function importsBetween(graph: ImportGraph, units: readonly string[]): string[] {
  const unit = (file: string): string => file.split('/').slice(0, 2).join('/');
  const members = new Set(units);
  return [...graph].flatMap(([file, targets]) =>
    targets.filter((t) => members.has(unit(file)) && members.has(unit(t)) && unit(t) !== unit(file)).map((t) => `${file} -> ${t}`),
  );
}

/**
 * Module hooks that let a worker thread run the TypeScript sources (see worker-entry.ts): a
 * relative `./x.js` imported from a .ts module that has no .js beside it is its `./x.ts`, and a .ts
 * module is stripped of its types as it loads. Only types are removed (no type check, no
 * downlevelling): the code that runs is the code tsc would emit for the same module.
 *
 * The transform is oxc's, through rolldown (the bundler under the test runner), loaded once per
 * worker: some 10 ms for the sender's modules. TypeScript's own transpileModule is the fallback
 * where rolldown is not installed; it takes seconds to load.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** @type {((file: string, source: string) => string) | undefined} */
let stripTypes;

async function loadStripTypes() {
  try {
    const { transformSync } = await import('rolldown/utils');
    return (file, source) => {
      const result = transformSync(file, source, { lang: 'ts', sourcemap: false });
      if (result.errors.length > 0) throw new Error(`${file}: ${result.errors.map((e) => e.message).join('; ')}`);
      return result.code;
    };
  } catch {
    const ts = (await import('typescript')).default;
    return (file, source) => ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
  }
}

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const fromTypeScript = context.parentURL?.endsWith('.ts') === true;
    if (fromTypeScript && err?.code === 'ERR_MODULE_NOT_FOUND' && specifier.startsWith('.') && specifier.endsWith('.js')) {
      return next(`${specifier.slice(0, -3)}.ts`, context);
    }
    throw err;
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  stripTypes ??= await loadStripTypes();
  const file = fileURLToPath(url);
  return { format: 'module', source: stripTypes(file, await readFile(file, 'utf8')), shortCircuit: true };
}

/**
 * Where a worker thread is started from: the worker module beside the module that starts it,
 * compiled (dist/) or TypeScript (the sources, as the tests run them). A thread cannot load a .ts
 * module by itself, so from the sources the entry is typescript-worker.mjs, which registers module
 * hooks that strip the types and then imports the worker module: the thread runs the same code
 * either way, and the tests run the path a built gateway runs.
 */
import { fileURLToPath } from 'node:url';

export interface WorkerEntry {
  /** What to pass to `new Worker`. */
  url: URL;
  /** Worker option `argv` (the .ts module for the bootstrap; none from dist/). */
  argv: string[];
}

/**
 * The entry of worker module `name` (its file name without extension) beside `fromModuleUrl`
 * (the starting module's import.meta.url).
 */
export function workerEntry(fromModuleUrl: string, name: string): WorkerEntry {
  if (!fromModuleUrl.endsWith('.ts')) return { url: new URL(`./${name}.js`, fromModuleUrl), argv: [] };
  return {
    url: new URL('./typescript-worker.mjs', import.meta.url),
    argv: [fileURLToPath(new URL(`./${name}.ts`, fromModuleUrl))],
  };
}

/**
 * A worker thread's entry when the gateway runs from its TypeScript sources (the tests): registers
 * typescript-worker-hooks.mjs, then imports the worker module named by the last argument
 * (worker-entry.ts passes it). From dist/ the compiled module is the entry and this file is not used.
 */
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';

register('./typescript-worker-hooks.mjs', import.meta.url);
const entry = process.argv.at(-1);
if (entry === undefined || !entry.endsWith('.ts')) throw new Error('typescript-worker.mjs: the last argument names the .ts worker module');
await import(pathToFileURL(entry).href);

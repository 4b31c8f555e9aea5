/**
 * A config file's relative paths are relative to the directory of the file itself, not to the
 * working directory of whoever runs the command: `smsgate serve`, `smsgate user create` and a
 * systemd unit started from `/` all open the same database for `/srv/gw/smsgate.json` with
 * `"database": { "path": "data/smsgate.sqlite" }` (/srv/gw/data/smsgate.sqlite). A config given as
 * an object (resolveConfigFromObject, for embedding) has no file: its paths stay as written and
 * resolve against the working directory, as node resolves any path.
 */
import { isAbsolute, resolve } from 'node:path';

/**
 * A key holding a file or directory path: object keys by name, `*` for every item of an array.
 * `database.path` is not a path when it is `:memory:` (SQLite's in-memory database).
 */
export type PathKey = readonly string[];

/** The paths config/ owns; the composition root adds its features' (a modem transport's profilesDir). */
export const CORE_PATH_KEYS: readonly PathKey[] = [
  ['database', 'path'],
  ['database', 'keyFile'],
  ['logging', 'file'],
];

const NOT_A_PATH = new Set([':memory:']);

/** Rewrites, in place, each relative path the keys name into an absolute one under `baseDir`. */
export function resolveRelativePaths(config: object, keys: readonly PathKey[], baseDir: string): void {
  for (const key of keys) visit(config, key, baseDir);
}

function visit(node: unknown, key: PathKey, baseDir: string): void {
  const [head, ...rest] = key;
  if (head === undefined || node === null || typeof node !== 'object') return;
  if (head === '*') {
    if (Array.isArray(node)) for (const item of node) visit(item, rest, baseDir);
    return;
  }
  const record = node as Record<string, unknown>;
  if (rest.length > 0) {
    visit(record[head], rest, baseDir);
    return;
  }
  const value = record[head];
  if (typeof value === 'string' && !NOT_A_PATH.has(value) && !isAbsolute(value)) record[head] = resolve(baseDir, value);
}

/**
 * The hash of a running config that `/status.json` shows (`configHash`), so an operator can see
 * which nodes of a cluster, or which reloads, run the same settings. Canonical JSON (object keys
 * sorted, arrays in order, `undefined` members left out) so two equal configs written in another
 * key order hash the same. Secrets are part of the hash (a changed password is a changed config)
 * but the hash is all that is ever shown: a SHA-256 digest does not give them back.
 */
import { createHash } from 'node:crypto';

/** JSON text of `value` with every object's keys in sorted order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)]));
}

/** Deep equality as JSON sees it (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** `sha256:<64 hex>` of the canonical JSON. */
export function configHash(config: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(config), 'utf8').digest('hex')}`;
}

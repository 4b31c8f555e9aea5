/**
 * What a reload changes (docs/behaviour/reload.md): which transports keep running untouched,
 * which rebind with new settings, which start and which drain, and which other settings differ
 * but only take effect at a restart. Pure: the reloader (./config-reload.ts) acts on it.
 */
import { sameJson } from '../config/config-hash.js';
import type { TransportDiff } from '../config/reload-outcome.js';
import type { SmsGateConfig, TransportEntry } from './config.js';

export type { TransportDiff } from '../config/reload-outcome.js';

/** Each list in the order the entries are configured (removed: in the running config's order). */
export function diffTransports(running: readonly TransportEntry[], next: readonly TransportEntry[]): TransportDiff {
  const before = new Map(running.map((entry) => [entry.name, entry]));
  const after = new Set(next.map((entry) => entry.name));
  const diff: TransportDiff = { unchanged: [], changed: [], added: [], removed: [] };
  for (const entry of next) {
    const old = before.get(entry.name);
    if (old === undefined) diff.added.push(entry.name);
    else if (sameJson(old, entry)) diff.unchanged.push(entry.name);
    else diff.changed.push(entry.name);
  }
  for (const entry of running) if (!after.has(entry.name)) diff.removed.push(entry.name);
  return diff;
}

/** The sections a reload applies while running; every other one needs a restart. */
export const RELOADABLE_KEYS = ['routes', 'transports'] as const satisfies readonly (keyof SmsGateConfig)[];

/** Top-level keys other than RELOADABLE_KEYS whose value differs: they keep their running value until a restart. */
export function restartOnlyChanges(running: SmsGateConfig, next: SmsGateConfig): string[] {
  const reloadable: ReadonlySet<string> = new Set(RELOADABLE_KEYS);
  const keys = new Set([...Object.keys(running), ...Object.keys(next)]);
  return [...keys]
    .filter((key) => !reloadable.has(key) && !sameJson((running as unknown as Record<string, unknown>)[key], (next as unknown as Record<string, unknown>)[key]))
    .sort();
}

/** True when a reload would start, rebind or drain any transport. */
export function changesTransports(diff: TransportDiff): boolean {
  return diff.changed.length + diff.added.length + diff.removed.length > 0;
}

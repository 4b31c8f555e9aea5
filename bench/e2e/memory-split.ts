/**
 * What the gateway's peak RSS is made of: /proc/<pid>/status read every 250 ms (no work in the
 * gateway itself), keeping the split of the highest VmRSS seen into anonymous memory (the V8 heaps
 * of the main thread and the webhook sender thread, malloc: SQLite's page caches and statements,
 * socket and request buffers) and file-backed pages (node's binary and libraries, SQLite's -shm),
 * as proc(5) counts them. VmHWM stays the peak the bench reports; this says what filled it.
 */
import { readFileSync } from 'node:fs';
import { statusFieldBytes } from './stats.js';

export interface RssSplit {
  rssBytes: number;
  anonBytes: number;
  fileBytes: number;
  shmemBytes: number;
}

const SAMPLE_EVERY_MS = 250;

export function rssSplitOf(pid: number): RssSplit | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string): number => statusFieldBytes(status, field);
  return { rssBytes: kb('VmRSS'), anonBytes: kb('RssAnon'), fileBytes: kb('RssFile'), shmemBytes: kb('RssShmem') };
}

/** Samples until stop(); returns the split at the highest VmRSS sampled. */
export function samplePeakRss(pid: number): { stop(): RssSplit | undefined } {
  let peak: RssSplit | undefined;
  const sample = (): void => {
    const split = rssSplitOf(pid);
    if (split !== undefined && (peak === undefined || split.rssBytes > peak.rssBytes)) peak = split;
  };
  sample();
  // unref: a bench that fails before stop() still exits.
  const timer = setInterval(sample, SAMPLE_EVERY_MS).unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

const mib = (bytes: number): string => `${Math.round(bytes / 1_048_576)} MB`;

/** The note the bench prints; heap figures are the main isolate's, from the admin /metrics at the last webhook. */
export function rssSplitNote(idle: RssSplit | undefined, peak: RssSplit | undefined, mainHeap: { totalBytes: number; usedBytes: number } | undefined): string {
  const parts: string[] = [];
  if (idle !== undefined) parts.push(`idle before the POST ${mib(idle.rssBytes)} (anonymous ${mib(idle.anonBytes)}, file-backed ${mib(idle.fileBytes)})`);
  if (peak !== undefined) {
    parts.push(
      `at the highest sampled ${mib(peak.rssBytes)}: anonymous ${mib(peak.anonBytes)} (both V8 heaps, malloc: SQLite caches and statements, buffers), ` +
        `file-backed ${mib(peak.fileBytes)} (node's binary and libraries, SQLite -shm)${peak.shmemBytes > 0 ? `, shared ${mib(peak.shmemBytes)}` : ''}`,
    );
  }
  if (mainHeap !== undefined && mainHeap.totalBytes > 0) parts.push(`main isolate's V8 heap at the last webhook ${mib(mainHeap.totalBytes)} (${mib(mainHeap.usedBytes)} used)`);
  return `RSS (sampled every ${SAMPLE_EVERY_MS} ms from /proc/<pid>/status): ${parts.join('; ')}`;
}

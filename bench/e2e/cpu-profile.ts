/**
 * Summarises the gateway's V8 CPU profiles (`node --cpu-prof`: one .cpuprofile per thread) over the
 * run's window: self time by category and the functions with the most self time.
 *
 * Self time is sampled wall time on the thread while it ran JavaScript or native code ("(idle)"
 * excluded), summed from the profile's timeDeltas. Native frames (empty url: writev, a statement's
 * step inside better-sqlite3...) count towards their caller's category, so a socket write lands in
 * sockets/net and a SQLite statement in SQLite. V8 puts builtins (JSON.parse, Array methods) inside
 * their caller's self time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs, CLOCK_MONOTONIC (V8 TimeTicks), like monoMs() * 1000. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const CATEGORIES = [
  'SQLite (better-sqlite3, our store statements)',
  'smpp package (PDU coder, filters)',
  'sockets/net (stream writes, reads)',
  'HTTP client (webhooks)',
  'koa/API (HTTP server)',
  'JSON',
  'crypto/HMAC',
  'GC',
  'our code (engine, transports, webhooks...)',
  'other (node internals, timers, libs)',
] as const;
export type Category = (typeof CATEGORIES)[number];
const [SQLITE, SMPP, SOCKETS, HTTP_CLIENT, API, JSON_CAT, CRYPTO, GC, OURS, OTHER] = CATEGORIES;

export interface ProfileSummary {
  threads: number;
  /** Sampled non-idle time in the window, all threads. */
  busyMs: number;
  idleMs: number;
  /** The main thread's (the event loop's) share: thread id 0 in the file name. */
  main: { busyMs: number; idleMs: number } | undefined;
  byCategory: { category: Category; ms: number }[];
  /** "our code" split by directory under src/. */
  oursByDir: { dir: string; ms: number }[];
  topFunctions: { name: string; where: string; category: Category; ms: number }[];
}

type FrameClass = Category | 'idle' | 'inherit' | 'http-shared';

function classifyFrame(frame: CallFrame): FrameClass {
  const { functionName: fn, url } = frame;
  if (fn === '(garbage collector)') return GC;
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)' || fn === '(root)') return OTHER;
  if (url === '') return fn === 'parse' || fn === 'stringify' ? JSON_CAT : 'inherit';
  // The benches' statement counters (bench/counters/preload.ts) wrap the statement calls: their
  // time is the wrapped call's, so it goes where the bare call's went.
  if (url.includes('/dist/bench/counters/')) return 'inherit';
  if (/\/node_modules\/(better-sqlite3|typeorm)\//.test(url) || /\/dist\/src\/store\//.test(url)) return SQLITE;
  if (url.includes('/node_modules/smpp/')) return SMPP;
  if (/^node:(net|stream|dgram|internal\/(stream_base_commons|streams\/|net|tcp_wrap))/.test(url)) return SOCKETS;
  if (/^node:(_http_client|_http_agent|internal\/deps\/undici)/.test(url) || url.includes('/node_modules/undici/') || url.includes('/dist/src/webhooks/http-client')) return HTTP_CLIENT;
  if (/^node:_http_server/.test(url) || /\/node_modules\/(koa|@koa|koa-[^/]+)\//.test(url) || url.includes('/dist/src/api/')) return API;
  if (/^node:(_http_common|_http_outgoing|_http_incoming)/.test(url)) return 'http-shared';
  if (/^node:(crypto|internal\/crypto\/)/.test(url) || url.includes('/dist/src/webhooks/signature')) return CRYPTO;
  if (url.includes('/dist/src/')) return OURS;
  return OTHER;
}

/** Where a frame is, short: src/engine/x.js:12, node_modules/smpp/lib/pdu.js:90, node:net. */
function whereOf(frame: CallFrame): string {
  if (frame.url === '') return '(native)';
  const short = frame.url.replace(/^file:\/\/.*?\/dist\//, '').replace(/^file:\/\/.*?\/node_modules\//, 'node_modules/');
  return `${short}:${frame.lineNumber + 1}`;
}

function ourDirOf(url: string): string {
  const match = /\/dist\/src\/([^/]+)\//.exec(url);
  return match?.[1] ?? 'src';
}

/** Summarises every .cpuprofile in dir, counting samples taken between fromMs and toMs (monoMs). */
export function summariseProfiles(dir: string, fromMs: number, toMs: number): ProfileSummary | undefined {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) return undefined;
  const byCategory = new Map<Category, number>();
  const byDir = new Map<string, number>();
  const byFunction = new Map<string, { name: string; where: string; category: Category; ms: number }>();
  let busyUs = 0;
  let idleUs = 0;
  let main: { busyMs: number; idleMs: number } | undefined;
  const fromUs = fromMs * 1_000;
  const toUs = toMs * 1_000;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const busyBefore = busyUs;
    const idleBefore = idleUs;
    const parentOf = new Map<number, ProfileNode>();
    const nodeOf = new Map<number, ProfileNode>();
    for (const node of profile.nodes) {
      nodeOf.set(node.id, node);
      for (const child of node.children ?? []) parentOf.set(child, node);
    }
    const categoryCache = new Map<number, Category | 'idle'>();
    const categoryOf = (node: ProfileNode): Category | 'idle' => {
      const cached = categoryCache.get(node.id);
      if (cached !== undefined) return cached;
      let resolved: Category | 'idle';
      const own = classifyFrame(node.callFrame);
      if (own === 'inherit') {
        const parent = parentOf.get(node.id);
        resolved = parent === undefined ? OTHER : categoryOf(parent);
      } else if (own === 'http-shared') {
        // Shared by client and server: the nearest caller says which.
        resolved = HTTP_CLIENT;
        for (let up = parentOf.get(node.id); up !== undefined; up = parentOf.get(up.id)) {
          const upClass = classifyFrame(up.callFrame);
          if (upClass === HTTP_CLIENT || upClass === API) {
            resolved = upClass;
            break;
          }
        }
      } else resolved = own;
      categoryCache.set(node.id, resolved);
      return resolved;
    };
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      const delta = profile.timeDeltas[i] ?? 0;
      t += delta;
      if (t < fromUs || t > toUs) continue;
      const node = nodeOf.get(profile.samples[i] as number);
      if (node === undefined) continue;
      const category = categoryOf(node);
      if (category === 'idle') {
        idleUs += delta;
        continue;
      }
      busyUs += delta;
      byCategory.set(category, (byCategory.get(category) ?? 0) + delta);
      if (category === OURS) {
        let withUrl: ProfileNode | undefined = node;
        while (withUrl !== undefined && withUrl.callFrame.url === '') withUrl = parentOf.get(withUrl.id);
        const dir = ourDirOf(withUrl?.callFrame.url ?? '');
        byDir.set(dir, (byDir.get(dir) ?? 0) + delta);
      }
      const where = whereOf(node.callFrame);
      const key = `${node.callFrame.functionName}@${where}`;
      const entry = byFunction.get(key) ?? { name: node.callFrame.functionName || '(anonymous)', where, category, ms: 0 };
      entry.ms += delta / 1_000;
      byFunction.set(key, entry);
    }
    // Node names them CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; workers have ids from 1.
    if (/\.\d+\.0\.\d+\.cpuprofile$/.test(file)) main = { busyMs: (busyUs - busyBefore) / 1_000, idleMs: (idleUs - idleBefore) / 1_000 };
  }
  return {
    threads: files.length,
    busyMs: busyUs / 1_000,
    idleMs: idleUs / 1_000,
    main,
    byCategory: [...byCategory].map(([category, us]) => ({ category, ms: us / 1_000 })).sort((a, b) => b.ms - a.ms),
    oursByDir: [...byDir].map(([dir, us]) => ({ dir, ms: us / 1_000 })).sort((a, b) => b.ms - a.ms),
    topFunctions: [...byFunction.values()].sort((a, b) => b.ms - a.ms).slice(0, 10),
  };
}

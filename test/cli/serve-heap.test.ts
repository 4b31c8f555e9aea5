/**
 * `smsgate serve` bounds how far V8 lets the old generation grow between full collections
 * (src/cli/serve-heap.ts): the flag it sets unless the operator chose one, and, in real node
 * children, that setting it at runtime (as serve does, after V8 has started) bounds the old space
 * of a workload that promotes medium-lived garbage, as the gateway does, against the default.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../src/cli/serve-heap.js';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';

describe('the heap growth flag serve sets', () => {
  it('is --heap-growing-percent=100 when the operator gave none', () => {
    expect(HEAP_GROWING_PERCENT).toBe(100);
    expect(heapGrowthFlag([], undefined)).toBe('--heap-growing-percent=100');
    expect(heapGrowthFlag(['--enable-source-maps', '--max-old-space-size=512'], '--trace-warnings')).toBe('--heap-growing-percent=100');
  });

  it("leaves the operator's own setting, in node's arguments or NODE_OPTIONS, in either spelling", () => {
    expect(heapGrowthFlag(['--heap-growing-percent=30'], undefined)).toBeUndefined();
    expect(heapGrowthFlag(['--heap_growing_percent=30'], undefined)).toBeUndefined();
    expect(heapGrowthFlag([], '--max-old-space-size=512 --heap-growing-percent=50')).toBeUndefined();
    expect(heapGrowthFlag([], '--heap-growing-percent 50')).toBeUndefined();
  });
});

/**
 * A child that keeps a live set of about 300,000 objects and streams objects through a window of
 * 200,000 (they survive the young generation, are promoted, then die), and prints the old space's
 * largest size in MiB. With `apply`, it first calls limitHeapGrowth from the build, as serve does.
 */
const CHURN = `
import v8 from 'node:v8';
const apply = process.argv[1] === 'apply';
if (apply) (await import(process.argv[2])).limitHeapGrowth([], undefined);
const live = [];
for (let i = 0; i < 300000; i++) live.push({ a: i, b: 'x' + i, c: [i] });
const window = [];
let maxOld = 0;
for (let round = 0; round < 2500; round++) {
  for (let i = 0; i < 2000; i++) window.push({ round, i, s: 'y' + i, list: [1, 2, 3] });
  if (window.length > 200000) window.splice(0, 100000);
  if (round % 20 === 0) maxOld = Math.max(maxOld, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size);
}
process.stdout.write(String(Math.round(maxOld / 1048576)) + ' ' + live.length + '\\n');
`;

function maxOldSpaceMib(apply: boolean): number {
  const module = pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'cli', 'serve-heap.js')).href;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', CHURN, apply ? 'apply' : 'default', module], { encoding: 'utf8', timeout: 120_000 });
  const [mib, live] = out.trim().split(' ').map(Number);
  expect(live).toBe(300_000);
  return mib ?? Number.NaN;
}

describe('set at runtime, as serve sets it', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('keeps the old space within about twice the live set, where V8 alone lets it grow far past that', () => {
    const bounded = maxOldSpaceMib(true);
    const unbounded = maxOldSpaceMib(false);
    // Live: about 45 MiB of objects plus the 200,000-object window (about 20 MiB). Measured on the
    // build machine: 96 MiB with the flag, 264 MiB without.
    expect(bounded).toBeLessThan(150);
    expect(unbounded).toBeGreaterThan(bounded * 1.5);
  }, 240_000);
});

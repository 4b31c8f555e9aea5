/**
 * SMPP throughput on loopback: submit_sm per second through SmppTransport at 1 and 4 binds and
 * window 1, 10 and 50, side by side with a bare `smpp` package client sending the same PDUs (the
 * library's ceiling on this machine), then receipts parsed per second. Prints a table; asserts
 * nothing.
 *
 * Fairness (drivers.ts): both sides send the same submit_sm fields with `window` in flight per
 * bind to the same SMSC process; runs alternate (bare, smsgate, bare, ...) ROUNDS times for
 * RUN_MS each and the median of each side is printed. Besides the rate, each side's CPU
 * microseconds per part in this process: on a loaded machine that figure is the steadier one.
 *
 *   npm run bench:smpp    (SMPP_BENCH_RUN_MS=3000 SMPP_BENCH_ROUNDS=3 by default; SMPP_BENCH_CASES=4x1,1x10 for some cases)
 */
import { parseReceiptText, parseSmppReceipt } from '../../src/receipts/index.js';
import { measureBare, measureTransport, startSmscProcess, type RunResult } from './drivers.js';

const RUN_MS = Number(process.env['SMPP_BENCH_RUN_MS'] ?? 3_000);
const ROUNDS = Number(process.env['SMPP_BENCH_ROUNDS'] ?? 3);
/** binds x window cases; SMPP_BENCH_CASES=4x1,1x10 runs only those. */
const CASES: { binds: number; window: number }[] = (process.env['SMPP_BENCH_CASES'] ?? '1x1,1x10,1x50,4x1,4x10,4x50')
  .split(',')
  .map((item) => {
    const [binds, window] = item.split('x').map(Number);
    return { binds: binds ?? 1, window: window ?? 1 };
  });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function receiptsPerSecond(): { text: number; full: number } {
  const texts = Array.from(
    { length: 1_000 },
    (_, i) => `id:${4_000_000_000 + i} sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:DELIVRD err:000 text:hello ${i}`,
  );
  const measure = (work: (text: string) => unknown): number => {
    let count = 0;
    const startedMs = Date.now();
    while (Date.now() - startedMs < 1_000) {
      for (const text of texts) work(text);
      count += texts.length;
    }
    return (count * 1000) / (Date.now() - startedMs);
  };
  return { text: measure(parseReceiptText), full: measure((text) => parseSmppReceipt({ text }, 'as-is')) };
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US').padStart(9);
}

async function main(): Promise<void> {
  const smsc = await startSmscProcess();
  console.log(`SMPP submit_sm per second on loopback (median of ${ROUNDS} alternating runs of ${RUN_MS} ms, test SMSC in a child process)`);
  console.log('binds  window   smsgate   bare smpp   ratio   CPU us/part smsgate  bare');
  for (const { binds, window } of CASES) {
    const bare: RunResult[] = [];
    const ours: RunResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await measureBare(smsc.address, binds, window, { durationMs: RUN_MS }));
      ours.push(await measureTransport(smsc.address, binds, window, { durationMs: RUN_MS }));
    }
    const oursRate = median(ours.map((run) => run.partsPerSecond));
    const bareRate = median(bare.map((run) => run.partsPerSecond));
    const oursCpu = median(ours.map((run) => run.cpuMicrosPerPart));
    const bareCpu = median(bare.map((run) => run.cpuMicrosPerPart));
    console.log(
      `${String(binds).padStart(5)}  ${String(window).padStart(6)} ${fmt(oursRate)}   ${fmt(bareRate)}   ${((oursRate / bareRate) * 100).toFixed(0).padStart(4)}%` +
        `   ${oursCpu.toFixed(1).padStart(18)}  ${bareCpu.toFixed(1).padStart(5)}`,
    );
  }
  await smsc.stop();
  const receipts = receiptsPerSecond();
  console.log(`receipts parsed per second: parseReceiptText ${fmt(receipts.text)}, parseSmppReceipt ${fmt(receipts.full)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

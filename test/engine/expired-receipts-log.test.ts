/** Unmatched receipts expiring are logged as one line per sweep, counted by transport, not one line per receipt. */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.js';
import { SimulatorTransport } from '../../src/transports/simulator/index.js';
import { startEngineHarness, type EngineHarness } from './engine-harness.js';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('expiring unmatched receipts', () => {
  it('writes one warn line for 300 receipts that matched no part, counting them, with five examples', async () => {
    const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
        callback();
      },
    });
    const sim = new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [] });
    harness = await startEngineHarness({ transports: [sim], engine: { unmatchedReceiptTtlMs: 60_000 }, logger: createLogger({ level: 'info', destination }) });
    for (let i = 0; i < 300; i++) await sim.reportReceipt({ messageId: `no-such-id-${i}`, status: 'DELIVRD' });
    harness.clockSkewMs = 60_001;
    expect(await harness.engine.expireUnmatchedReceipts()).toBe(300);
    const expiredLines = lines.filter((l) => l.msg.includes('matched no submitted part'));
    expect(expiredLines).toHaveLength(1);
    expect(expiredLines[0]).toMatchObject({ level: 40, expired: 300, byTransport: { sim: 300 } });
    expect(expiredLines[0]?.['examples']).toHaveLength(5);
  });
});

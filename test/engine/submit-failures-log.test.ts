/** A transport whose submit keeps rejecting is logged once, then once when it works again: not a line per message. */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.js';
import type { OutboundMessage, PartOutcome } from '../../src/transports/transport.js';
import { startEngineHarness, waitFor, type EngineHarness } from './engine-harness.js';
import { ScriptedTransport } from './scripted-transport.js';

/** Rejects submit (a broken transport) while `rejecting`, else accepts every part. */
class RejectingTransport extends ScriptedTransport {
  rejecting = true;
  rejections = 0;
  private nextId = 1;

  override submit(message: OutboundMessage): Promise<PartOutcome[]> {
    if (this.rejecting) {
      this.rejections++;
      return Promise.reject(new Error('transport bug'));
    }
    const parts = message.partNumbers ?? message.segments.map((_, i) => i + 1);
    return Promise.resolve(parts.map((part) => ({ part, kind: 'accepted', messageId: `m${this.nextId++}` })));
  }
}

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('a transport whose submit keeps rejecting', () => {
  it('writes one error line for 30 rejections and one line when submits work again', async () => {
    const lines: { level: number; msg: string }[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
        callback();
      },
    });
    const transport = new RejectingTransport('broken');
    harness = await startEngineHarness({ transports: [transport], engine: { maxAttempts: 100 }, logger: createLogger({ level: 'info', destination }) });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: Array.from({ length: 20 }, (_, i) => `3538712${String(i).padStart(5, '0')}`) });
    await waitFor(() => transport.rejections, (n) => n >= 30);
    transport.rejecting = false;
    await waitFor(() => harness!.parts(campaignId), (parts) => parts.length === 20 && parts.every((p) => p.state === 'submitted'));
    const submitLines = lines.filter((l) => l.msg.startsWith('transport.submit'));
    expect(submitLines.map((l) => l.level)).toEqual([50, 40]);
    expect(submitLines[0]?.msg).toMatch(/failed; retrying/);
    expect(submitLines[1]?.msg).toMatch(/works again$/);
  });
});

import { describe, expect, it } from 'vitest';
import { type AssembledMessage, InboundAssembler } from '../../../src/transports/modem/inbound-assembler.js';

function part(sequence: number, text: string, total = 2, reference = 1) {
  return { device: 'm0', from: '353861234567', concat: { reference, referenceBits: 8 as const, total, sequence }, text, receivedAt: '2026-01-01T00:00:00.000Z', hex: `HEX${sequence}` };
}

describe('InboundAssembler', () => {
  it('hands on a message once all its parts are in, and settles every part only then', async () => {
    const delivered: AssembledMessage[] = [];
    const assembler = new InboundAssembler(async (m) => {
      delivered.push(m);
    }, 60_000);
    let firstSettled = false;
    const first = assembler.add(part(2, 'world')).then(() => {
      firstSettled = true;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(firstSettled).toBe(false);
    await Promise.all([assembler.add(part(1, 'hello ')), first]);
    expect(delivered).toEqual([{ device: 'm0', from: '353861234567', text: 'hello world', receivedAt: '2026-01-01T00:00:00.000Z', raw: 'HEX1\nHEX2', missing: [] }]);
    expect(assembler.pendingGroups).toBe(0);
  });

  it('keeps messages with different references apart', async () => {
    const delivered: string[] = [];
    const assembler = new InboundAssembler(async (m) => {
      delivered.push(m.text);
    }, 60_000);
    await Promise.all([assembler.add(part(1, 'a', 2, 1)), assembler.add(part(1, 'x', 2, 2)), assembler.add(part(2, 'y', 2, 2)), assembler.add(part(2, 'b', 2, 1))]);
    expect(delivered.sort()).toEqual(['ab', 'xy']);
  });

  it('hands on an incomplete message after the timeout, naming the missing parts', async () => {
    const delivered: AssembledMessage[] = [];
    const assembler = new InboundAssembler(async (m) => {
      delivered.push(m);
    }, 20);
    await assembler.add(part(1, 'only this', 3));
    expect(delivered[0]).toMatchObject({ text: 'only this', missing: [2, 3] });
  });

  it('rejects every part when delivery fails, so none is deleted', async () => {
    const assembler = new InboundAssembler(async () => {
      throw new Error('store down');
    }, 60_000);
    const results = await Promise.allSettled([assembler.add(part(1, 'a')), assembler.add(part(2, 'b'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});

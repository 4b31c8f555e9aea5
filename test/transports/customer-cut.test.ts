/**
 * The rules every transport and the engine share for a part an SMPP customer cut itself
 * (src/transports/customer-cut.ts): what fits one part beside the customer's header in each data
 * coding (3GPP TS 23.040 §9.2.3.16: 140 octets of user data; §9.2.3.24: a UDH and its fill bits
 * come out of them), and the alphabet a Latin-1 part goes in where only GSM-7 and UCS-2 exist.
 */
import { describe, expect, it } from 'vitest';
import { airEncoding, cutHeaderOctets, cutPartRefusal } from '../../src/transports/customer-cut.js';
import { SimulatorTransport } from '../../src/transports/simulator/index.js';
import type { TransportReceipt } from '../../src/transports/transport.js';

const fits = (text: string, dataCoding: 0 | 3 | 8, scheme: 'udh8' | 'udh16' | 'sar'): string =>
  cutPartRefusal(text, dataCoding, cutHeaderOctets({ scheme, reference: 7 }))?.status ?? 'fits';

describe('a customer part fits one part beside its header', () => {
  it('counts the header each part carries on the air: 6 octets (8-bit UDH), 7 (16-bit UDH), for SAR TLVs the UDH the SMSC builds for the reference', () => {
    expect([cutHeaderOctets('udh8'), cutHeaderOctets('udh16'), cutHeaderOctets(null)]).toEqual([6, 7, 0]);
    expect([cutHeaderOctets({ scheme: 'sar', reference: 0xff }), cutHeaderOctets({ scheme: 'sar', reference: 0x100 }), cutHeaderOctets('sar')]).toEqual([6, 7, 7]);
  });

  it('data_coding 0: 153 septets beside an 8-bit UDH, 152 beside a 16-bit one, 153 with SAR (8-bit reference); an extension character counts two', () => {
    expect([fits('a'.repeat(153), 0, 'udh8'), fits('a'.repeat(154), 0, 'udh8')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('a'.repeat(152), 0, 'udh16'), fits('a'.repeat(153), 0, 'udh16')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('a'.repeat(153), 0, 'sar'), fits('a'.repeat(154), 0, 'sar')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('€'.repeat(76), 0, 'udh8'), fits('€'.repeat(77), 0, 'udh8')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
  });

  it('data_coding 0: a character outside the GSM 7 bit default alphabet is named', () => {
    expect(cutPartRefusal('abcЖ', 0, 6)).toEqual({ status: 'CUSTOMER_PART_UNENCODABLE', detail: "character 'Ж' (U+0416) has no GSM 7 bit code" });
  });

  it('data_coding 3: 134 Latin-1 octets beside an 8-bit UDH, 133 beside a 16-bit one, 134 with SAR (8-bit reference); nothing above U+00FF', () => {
    expect([fits('é'.repeat(134), 3, 'udh8'), fits('é'.repeat(135), 3, 'udh8')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('é'.repeat(133), 3, 'udh16'), fits('é'.repeat(134), 3, 'udh16')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('é'.repeat(134), 3, 'sar'), fits('é'.repeat(135), 3, 'sar')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect(cutPartRefusal('price €5', 3, 0)).toEqual({ status: 'CUSTOMER_PART_UNENCODABLE', detail: "character '€' (U+20AC) has no Latin-1 code" });
  });

  it('data_coding 8: 67 UTF-16 units beside an 8-bit UDH, 66 beside a 16-bit one, 67 with SAR (8-bit reference); an emoji counts two', () => {
    expect([fits('ж'.repeat(67), 8, 'udh8'), fits('ж'.repeat(68), 8, 'udh8')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('ж'.repeat(66), 8, 'udh16'), fits('ж'.repeat(67), 8, 'udh16')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('ж'.repeat(67), 8, 'sar'), fits('ж'.repeat(68), 8, 'sar')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
    expect([fits('😀'.repeat(33), 8, 'udh8'), fits('😀'.repeat(34), 8, 'udh8')]).toEqual(['fits', 'CUSTOMER_PART_TOO_LONG']);
  });
});

describe('the alphabet a customer part goes in where only GSM-7 and UCS-2 exist', () => {
  it('keeps 0 as GSM-7 and 8 as UCS-2 (even for ASCII text); Latin-1 as GSM-7 when every character is in GSM-7, else UCS-2', () => {
    expect(airEncoding(0, 'Hello')).toBe('GSM-7');
    expect(airEncoding(8, 'Hello')).toBe('UCS-2');
    expect(airEncoding(3, 'café ñ Ü')).toBe('GSM-7');
    expect(airEncoding(3, 'Côte')).toBe('UCS-2');
  });
});

describe('the simulator and a customer\'s own cut', () => {
  it('accepts the part as any other and reports its receipt', async () => {
    const receipts: TransportReceipt[] = [];
    const sim = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 1 }, { recordAccepted: true });
    sim.setHandlers({ onReceipt: async (r) => void receipts.push(r), onInbound: async () => undefined, onState: () => undefined });
    await sim.start();
    try {
      const outcomes = await sim.submit({
        messageKey: 'k', destination: '353871234567', sender: { value: 'Acme', kind: 'alphanumeric', ton: 5, npi: 0 }, encoding: 'UCS-2',
        segments: ['Côte'], concatReference: 1, customerCut: { dataCoding: 3, concat: { scheme: 'sar', reference: 9, total: 2, sequence: 2 } },
      });
      expect(outcomes.map((o) => [o.part, o.kind])).toEqual([[1, 'accepted']]);
      const deadline = Date.now() + 10_000;
      while (receipts.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(receipts.map((r) => r.final)).toEqual([true]);
    } finally {
      await sim.stop();
    }
  });
});

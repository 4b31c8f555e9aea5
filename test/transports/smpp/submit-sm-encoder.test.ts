import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import { planSubmits, type SubmitSmFields } from '../../../src/transports/smpp/submit-pdu.js';
import { EncodedPdu, EncodedResponse, encodeSubmitSm } from '../../../src/transports/smpp/submit-sm-encoder.js';
import type { OutboundMessage } from '../../../src/transports/transport.js';
import { decodeSubmitSm } from '../../support/smsc/pdu-framer.js';

const base = { concatenation: 'udh8', dataCoding: { gsm7: 0 }, registeredDelivery: 1, priority: 0, systemType: '' } as const;

function message(text: string, overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  const plan = planMessage(text);
  return {
    messageKey: 'k', destination: '447700900123', sender: { value: 'Shop', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding, segments: plan.segments, concatReference: 0xabcd, ...overrides,
  };
}

/** The smpp package's own encoding of the same fields: the bytes ours must equal. */
function packageBytes(fields: SubmitSmFields): Buffer {
  return new smpp.PDU('submit_sm', { ...fields }).toBuffer();
}

const CASES: { name: string; text: string; config: Parameters<typeof planSubmits>[1]; overrides?: Partial<OutboundMessage> }[] = [
  { name: 'one GSM-7 part', text: 'Hello @ £5 {x}', config: base },
  { name: '3-part GSM-7, UDH 8-bit', text: 'a'.repeat(400), config: base },
  { name: 'UCS-2, UDH 8-bit', text: 'ж'.repeat(130), config: base },
  { name: 'UCS-2, UDH 16-bit', text: 'ж'.repeat(130), config: { ...base, concatenation: 'udh16' }, overrides: { segments: ['ж'.repeat(66), 'ж'.repeat(64)] } },
  { name: 'SAR TLVs', text: 'b'.repeat(300), config: { ...base, concatenation: 'sar' } },
  { name: 'message_payload', text: 'c'.repeat(500), config: { ...base, concatenation: 'payload' } },
  { name: 'Latin-1, validity, priority, TON/NPI overrides', text: 'é'.repeat(10), config: { ...base, dataCoding: { gsm7: 3 }, validityPeriod: '000001000000000R', priority: 2, sourceTon: 1, sourceNpi: 1, registeredDelivery: 0 } },
  { name: 'IA5, empty service fields', text: 'plain ascii', config: { ...base, dataCoding: { gsm7: 1 } } },
];

describe('encodeSubmitSm', () => {
  for (const { name, text, config, overrides } of CASES) {
    it(`equals the smpp package's bytes: ${name}`, () => {
      const plan = planSubmits(message(text, overrides), config);
      if (!plan.ok) throw new Error(plan.detail);
      expect(plan.submits.length).toBeGreaterThan(0);
      for (const submit of plan.submits) {
        expect(encodeSubmitSm(submit.fields).toString('hex')).toBe(packageBytes(submit.fields).toString('hex'));
        expect(submit.pdu.equals(encodeSubmitSm(submit.fields))).toBe(true);
      }
    });
  }

  it('decodes back to the fields (our own decoder)', () => {
    const plan = planSubmits(message('b'.repeat(300)), { ...base, concatenation: 'sar' });
    if (!plan.ok) throw new Error(plan.detail);
    const wire = decodeSubmitSm(plan.submits[1]!.pdu);
    expect(wire).toMatchObject({ source_addr: 'Shop', destination_addr: '447700900123', esm_class: 0, data_coding: 0, registered_delivery: 1 });
    expect(wire.short_message.toString('latin1')).toBe('b'.repeat(147));
  });

  it('refuses a short_message over 255 octets rather than cutting it', () => {
    const plan = planSubmits(message('x'), base);
    if (!plan.ok) throw new Error(plan.detail);
    expect(() => encodeSubmitSm({ ...plan.submits[0]!.fields, short_message: Buffer.alloc(256) })).toThrow(RangeError);
  });

  it('EncodedPdu: each send gets its own copy, numbered', () => {
    const bytes = planSubmits(message('x'), base);
    if (!bytes.ok) throw new Error(bytes.detail);
    const pdu = new EncodedPdu('submit_sm', bytes.submits[0]!.pdu);
    pdu.sequence_number = 0x01020304;
    const first = pdu.toBuffer();
    expect(first.readUInt32BE(12)).toBe(0x01020304);
    expect(bytes.submits[0]!.pdu.readUInt32BE(12)).toBe(0);
    expect(first.subarray(16).equals(bytes.submits[0]!.pdu.subarray(16))).toBe(true);
  });
});

describe('EncodedResponse', () => {
  it('writes deliver_sm_resp and data_sm_resp octet for octet as the package answers the request', () => {
    for (const command of ['deliver_sm', 'data_sm'] as const) {
      for (const [sequence, status] of [[1, 0], [0x7fffffff, 0x64], [4242, 0x08]] as const) {
        const request = new smpp.PDU(command, { sequence_number: sequence });
        const expected = request.response({ command_status: status, message_id: '' }).toBuffer();
        const ours = new EncodedResponse(command === 'deliver_sm' ? 'deliver_sm_resp' : 'data_sm_resp', sequence, status);
        expect(ours.isResponse()).toBe(true);
        expect(ours.toBuffer().toString('hex')).toBe(expected.toString('hex'));
      }
    }
  });
});

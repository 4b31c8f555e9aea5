import { describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import { encodePartText, planSubmits } from '../../../src/transports/smpp/index.js';
import type { OutboundMessage } from '../../../src/transports/transport.js';

const settings = { concatenation: 'udh8', dataCoding: { gsm7: 0 }, registeredDelivery: 1, priority: 0, systemType: '' } as const;

function message(text: string, overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  const plan = planMessage(text);
  return {
    messageKey: 'k',
    destination: '447700900123',
    sender: { value: '447700900000', kind: 'international', ton: 1, npi: 1 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference: 0xabcd,
    ...overrides,
  };
}

describe('planSubmits', () => {
  it('sends a one-part message plain whatever the concatenation method', () => {
    for (const concatenation of ['udh8', 'udh16', 'sar', 'payload'] as const) {
      const plan = planSubmits(message('short'), { ...settings, concatenation });
      expect(plan.ok && plan.submits.length).toBe(1);
      const fields = plan.ok ? plan.submits[0]!.fields : undefined;
      expect(fields?.esm_class).toBe(0);
      expect(fields?.short_message.toString('latin1')).toBe('short');
      expect(fields?.sar_msg_ref_num).toBeUndefined();
      expect(fields?.message_payload).toBeUndefined();
    }
  });

  it('uses the low octet of the reference for an 8-bit UDH', () => {
    const plan = planSubmits(message('q'.repeat(200)), settings);
    expect(plan.ok && plan.submits.map((submit) => submit.fields.short_message.subarray(0, 6).toString('hex'))).toEqual([
      '050003cd0201', '050003cd0202',
    ]);
  });

  it('puts a UCS-2 text in one message_payload in payload mode', () => {
    const plan = planSubmits(message('ж'.repeat(100)), { ...settings, concatenation: 'payload' });
    expect(plan.ok && plan.submits.length).toBe(1);
    const fields = plan.ok ? plan.submits[0]!.fields : undefined;
    expect(fields?.data_coding).toBe(8);
    expect(fields?.message_payload?.length).toBe(200);
    expect(plan.ok && plan.submits[0]!.parts).toEqual([1, 2]);
  });

  it('refuses part numbers outside the message', () => {
    expect(planSubmits(message('x'.repeat(200), { partNumbers: [3] }), settings)).toEqual({
      ok: false, status: 'SMS_BAD_PART', detail: 'part 3 is not between 1 and 2',
    });
  });

  it('takes the source TON/NPI from the sender rules unless overridden', () => {
    const plain = planSubmits(message('x'), settings);
    expect(plain.ok && [plain.submits[0]!.fields.source_addr_ton, plain.submits[0]!.fields.source_addr_npi]).toEqual([1, 1]);
    const overridden = planSubmits(message('x'), { ...settings, sourceTon: 5, sourceNpi: 0 });
    expect(overridden.ok && [overridden.submits[0]!.fields.source_addr_ton, overridden.submits[0]!.fields.source_addr_npi]).toEqual([5, 0]);
  });
});

describe('encodePartText', () => {
  it('refuses a GSM-7 character IA5 cannot carry, naming it', () => {
    expect(encodePartText('café', 'GSM-7', 1)).toEqual({
      ok: false, status: 'ENCODING_UNSUPPORTED', detail: "character 'é' (U+00E9) has no IA5/ASCII octet",
    });
  });

  it('sends Greek capitals only in the SMSC default alphabet', () => {
    expect(encodePartText('ΔΣ', 'GSM-7', 0)).toEqual({ ok: true, octets: Buffer.from([0x10, 0x18]), dataCoding: 0 });
    expect(encodePartText('ΔΣ', 'GSM-7', 3).ok).toBe(false);
  });

  it('sends UCS-2 as data_coding 8 whatever the GSM-7 setting', () => {
    expect(encodePartText('ж', 'UCS-2', 3)).toEqual({ ok: true, octets: Buffer.from([0x04, 0x36]), dataCoding: 8 });
  });
});

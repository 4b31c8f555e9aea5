import { afterEach, describe, expect, it } from 'vitest';
import type { SmppTransportConfig } from '../../../src/transports/smpp/index.js';
import { TLV_TAG } from '../../support/smsc/pdu-framer.js';
import { outbound, startRig, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

// 3 GSM-7 parts: 153 + 153 + 14 septets (SPEC: 160 in one part, then 153 per part).
const GSM_TEXT = 'a'.repeat(153) + 'b'.repeat(153) + 'c'.repeat(14);
// 3 UCS-2 parts: 67 + 67 + 6 code units.
const UCS2_TEXT = 'ж'.repeat(67) + 'щ'.repeat(67) + 'ю'.repeat(6);

async function sendWith(config: Partial<SmppTransportConfig>, text: string): Promise<Rig> {
  rig = await startRig({}, config);
  const outcomes = await rig.transport.submit(outbound(text, { concatReference: 0x1234 }));
  expect(outcomes.map((outcome) => outcome.kind)).toEqual(outcomes.map(() => 'accepted'));
  return rig;
}

describe('concatenation on the wire', () => {
  it('udh8: 05 00 03 ref total seq before the septets, esm_class 0x40 (GSM-7)', async () => {
    const { smsc } = await sendWith({ concatenation: 'udh8' }, GSM_TEXT);
    const wires = smsc.submits.map((submit) => submit.wire);
    expect(wires.map((wire) => wire.esm_class)).toEqual([0x40, 0x40, 0x40]);
    expect(wires.map((wire) => wire.data_coding)).toEqual([0, 0, 0]);
    expect(wires.map((wire) => wire.short_message.subarray(0, 6).toString('hex'))).toEqual(['050003340301', '050003340302', '050003340303']);
    expect(wires.map((wire) => wire.short_message.length - 6)).toEqual([153, 153, 14]);
    expect(wires[1]!.short_message.subarray(6).every((octet) => octet === 0x62)).toBe(true);
  });

  it('udh8 with UCS-2: data_coding 8, big-endian UTF-16 after the UDH', async () => {
    const { smsc } = await sendWith({ concatenation: 'udh8' }, UCS2_TEXT);
    const wires = smsc.submits.map((submit) => submit.wire);
    expect(wires.map((wire) => wire.data_coding)).toEqual([8, 8, 8]);
    expect(wires.map((wire) => wire.short_message.subarray(0, 6).toString('hex'))).toEqual(['050003340301', '050003340302', '050003340303']);
    expect(wires.map((wire) => wire.short_message.length - 6)).toEqual([134, 134, 12]);
    expect(wires[0]!.short_message.subarray(6, 8).toString('hex')).toBe('0436');
  });

  it('udh16: 06 08 04 refHi refLo total seq (UCS-2 planned for 16-bit references)', async () => {
    // 66 code units per part fit beside a 7-octet UDH (TS 23.040 §9.2.3.24.8).
    const text = 'ж'.repeat(66) + 'щ'.repeat(66) + 'ю'.repeat(6);
    rig = await startRig({}, { concatenation: 'udh16' });
    const segments = [text.slice(0, 66), text.slice(66, 132), text.slice(132)];
    const outcomes = await rig.transport.submit({ ...outbound('x'), encoding: 'UCS-2', segments, concatReference: 0x1234 });
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    const wires = rig.smsc.submits.map((submit) => submit.wire);
    expect(wires.map((wire) => wire.short_message.subarray(0, 7).toString('hex'))).toEqual(['06080412340301', '06080412340302', '06080412340303']);
    expect(wires.map((wire) => wire.esm_class)).toEqual([0x40, 0x40, 0x40]);
  });

  it('udh16 refuses a 153-septet part that no longer fits beside the longer UDH', async () => {
    rig = await startRig({}, { concatenation: 'udh16' });
    const outcomes = await rig.transport.submit(outbound(GSM_TEXT));
    expect(outcomes.map((outcome) => [outcome.kind, outcome.kind === 'permanent' ? outcome.status : ''])).toEqual([
      ['permanent', 'SMS_PART_TOO_LONG'], ['permanent', 'SMS_PART_TOO_LONG'], ['permanent', 'SMS_PART_TOO_LONG'],
    ]);
    expect(rig.smsc.submits).toHaveLength(0);
  });

  it('sar: text alone, sar_msg_ref_num / sar_total_segments / sar_segment_seqnum TLVs (GSM-7)', async () => {
    const { smsc } = await sendWith({ concatenation: 'sar' }, GSM_TEXT);
    const wires = smsc.submits.map((submit) => submit.wire);
    expect(wires.map((wire) => wire.esm_class)).toEqual([0, 0, 0]);
    expect(wires.map((wire) => wire.short_message.length)).toEqual([153, 153, 14]);
    expect(wires.map((wire) => wire.tlvs.get(TLV_TAG.sar_msg_ref_num)?.toString('hex'))).toEqual(['1234', '1234', '1234']);
    expect(wires.map((wire) => wire.tlvs.get(TLV_TAG.sar_total_segments)?.toString('hex'))).toEqual(['03', '03', '03']);
    expect(wires.map((wire) => wire.tlvs.get(TLV_TAG.sar_segment_seqnum)?.toString('hex'))).toEqual(['01', '02', '03']);
  });

  it('sar with UCS-2', async () => {
    const { smsc } = await sendWith({ concatenation: 'sar' }, UCS2_TEXT);
    const wires = smsc.submits.map((submit) => submit.wire);
    expect(wires.map((wire) => wire.data_coding)).toEqual([8, 8, 8]);
    expect(wires.map((wire) => wire.short_message.length)).toEqual([134, 134, 12]);
    expect(wires.map((wire) => wire.tlvs.get(TLV_TAG.sar_segment_seqnum)?.toString('hex'))).toEqual(['01', '02', '03']);
  });

  it('payload: the whole text in one message_payload, empty short_message, one id for every part', async () => {
    rig = await startRig({}, { concatenation: 'payload' });
    const outcomes = await rig.transport.submit(outbound(GSM_TEXT));
    const messageId = rig.smsc.submits[0]!.messageId;
    expect(outcomes).toEqual([1, 2, 3].map((part) => ({ part, kind: 'accepted', messageId })));
    const smsc = rig.smsc;
    expect(smsc.submits).toHaveLength(1);
    const wire = smsc.submits[0]!.wire;
    expect(wire.short_message.length).toBe(0);
    expect(wire.tlvs.get(TLV_TAG.message_payload)?.length).toBe(320);
    expect(wire.esm_class).toBe(0);
  });

  it('sends only the requested parts on a retry, keeping numbers and total', async () => {
    rig = await startRig({}, { concatenation: 'udh8' });
    const outcomes = await rig.transport.submit(outbound(GSM_TEXT, { partNumbers: [2] }));
    expect(outcomes).toEqual([{ part: 2, kind: 'accepted', messageId: expect.any(String) }]);
    expect(rig.smsc.submits.map((submit) => submit.wire.short_message.subarray(0, 6).toString('hex'))).toEqual(['050003340302']);
  });
});

describe('data_coding for GSM-7 text', () => {
  it('0x03 sends Latin-1 octets', async () => {
    const { smsc } = await sendWith({ dataCoding: { gsm7: 3 } }, 'Café £5 ü');
    const wire = smsc.submits[0]!.wire;
    expect(wire.data_coding).toBe(3);
    expect(wire.short_message.toString('hex')).toBe(Buffer.from('Café £5 ü', 'latin1').toString('hex'));
  });

  it('0x01 sends ASCII octets', async () => {
    const { smsc } = await sendWith({ dataCoding: { gsm7: 1 } }, 'Hello {x}_');
    const wire = smsc.submits[0]!.wire;
    expect(wire.data_coding).toBe(1);
    expect(wire.short_message.toString('latin1')).toBe('Hello {x}_');
  });

  it('fails with ENCODING_UNSUPPORTED naming the character Latin-1 cannot carry', async () => {
    rig = await startRig({}, { dataCoding: { gsm7: 3 } });
    const outcomes = await rig.transport.submit(outbound('Price 5€'));
    expect(outcomes).toEqual([{ part: 1, kind: 'permanent', status: 'ENCODING_UNSUPPORTED' }]);
    expect(rig.smsc.submits).toHaveLength(0);
  });
});

/**
 * The SMPP transport sends a part an SMPP customer cut itself (OutboundMessage.customerCut) with
 * the customer's data_coding and concatenation, whatever the carrier's own settings, to a test
 * SMSC on loopback that records the octets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import type { OutboundMessage } from '../../../src/transports/transport.js';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** One customer part as the engine hands it over: its text is the one segment. */
function cutMessage(text: string, customerCut: NonNullable<OutboundMessage['customerCut']>, encoding: 'GSM-7' | 'UCS-2'): OutboundMessage {
  return outbound(text, { encoding, segments: [text], customerCut });
}

const onWire = (r: Rig) => r.smsc.submits.map(({ wire }) => ({
  esmClass: wire.esm_class, dataCoding: wire.data_coding, shortMessage: wire.short_message.toString('hex'),
  tlvs: Object.fromEntries([...wire.tlvs].map(([tag, value]) => [tag.toString(16).padStart(4, '0'), value.toString('hex')])),
}));

describe('a customer\'s own cut on the wire', () => {
  it('udh16 over a carrier set to message_payload: the customer\'s 06 08 04 header, UCS-2, esm_class UDHI', async () => {
    rig = await startRig({}, { concatenation: 'payload' });
    const outcomes = await rig.transport.submit(cutMessage('Да', { dataCoding: 8, concat: { scheme: 'udh16', reference: 0xabcd, total: 9, sequence: 7 } }, 'UCS-2'));
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted']);
    expect(onWire(rig)).toEqual([{ esmClass: 0x40, dataCoding: 8, shortMessage: '060804abcd0907' + '04140430', tlvs: {} }]);
  });

  it('udh8 in Latin-1 over a carrier set to SAR: the customer\'s 05 00 03 header and data_coding 3, no SAR TLVs', async () => {
    rig = await startRig({}, { concatenation: 'sar' });
    await rig.transport.submit(cutMessage('Ôté', { dataCoding: 3, concat: { scheme: 'udh8', reference: 0xff, total: 2, sequence: 2 } }, 'UCS-2'));
    expect(onWire(rig)).toEqual([{ esmClass: 0x40, dataCoding: 3, shortMessage: '050003ff0202' + 'd474e9', tlvs: {} }]);
  });

  it('sar over a carrier set to udh8: the customer\'s three TLVs, no UDH, GSM 03.38 septets unpacked with data_coding 0 though the carrier takes Latin-1', async () => {
    rig = await startRig({}, { concatenation: 'udh8', dataCoding: { gsm7: 3 } });
    await rig.transport.submit(cutMessage('£1 @', { dataCoding: 0, concat: { scheme: 'sar', reference: 0x0102, total: 5, sequence: 5 } }, 'GSM-7'));
    expect(onWire(rig)).toEqual([{ esmClass: 0, dataCoding: 0, shortMessage: '01312000', tlvs: { '020c': '0102', '020e': '05', '020f': '05' } }]);
  });

  it('a retry of the part (partNumbers [1]) sends the same octets', async () => {
    rig = await startRig({}, {});
    const customerCut = { dataCoding: 0 as const, concat: { scheme: 'udh8' as const, reference: 3, total: 2, sequence: 1 } };
    await rig.transport.submit(cutMessage('again', customerCut, 'GSM-7'));
    await rig.transport.submit({ ...cutMessage('again', customerCut, 'GSM-7'), partNumbers: [1] });
    const [first, second] = onWire(rig);
    expect(second).toEqual(first);
    expect(first?.shortMessage).toBe('050003030201' + '616761696e');
  });

  it('without a header the SMS core\'s segments go with the carrier\'s concatenation, in the customer\'s data_coding', async () => {
    rig = await startRig({}, { concatenation: 'udh8' });
    const plan = planMessage('é'.repeat(200));
    const outcomes = await rig.transport.submit(outbound('', { encoding: plan.encoding, segments: plan.segments, concatReference: 0x0105, customerCut: { dataCoding: 3, concat: null } }));
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted']);
    await waitFor(() => rig!.smsc.submits.length === 2, 'two submits');
    expect(onWire(rig).map((w) => [w.dataCoding, w.shortMessage.slice(0, 12), w.shortMessage.length / 2 - 6])).toEqual([[3, '050003050201', 153], [3, '050003050202', 47]]);
  });

  it('fails a part too long for its header permanently and sends nothing', async () => {
    rig = await startRig({}, {});
    const outcomes = await rig.transport.submit(cutMessage('ж'.repeat(67), { dataCoding: 8, concat: { scheme: 'udh16', reference: 1, total: 2, sequence: 1 } }, 'UCS-2'));
    expect(outcomes).toEqual([{ part: 1, kind: 'permanent', status: 'CUSTOMER_PART_TOO_LONG' }]);
    expect(rig.smsc.submits).toEqual([]);
  });
});

import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import { SERVER_STATUS } from '../../../src/smpp-server/contracts.js';
import { deliverSmParams, SubmitSmResp } from '../../../src/smpp-server/protocol/server-pdus.js';
import { decodeSubmitSm } from '../../../src/smpp-server/protocol/submit-sm-decoder.js';
import { SubmitRate } from '../../../src/smpp-server/protocol/submit-rate.js';
import { COMMAND_STATUS_CODE } from '../../../src/transports/smpp/command-status.js';
import '../../../src/transports/smpp/pdu-decoder.js';

/** A submit_sm as another ESME would write it: the `smpp` package's encoder. */
function packageSubmitSm(fields: Record<string, unknown>, sequenceNumber = 42): Buffer {
  return new smpp.PDU('submit_sm', { sequence_number: sequenceNumber, data_coding: 0, ...fields }).toBuffer();
}

const UDH8 = Buffer.from('050003a70201', 'hex');

describe('decodeSubmitSm', () => {
  it('reads every mandatory field, the time strings as sent and short_message octets with their UDH', () => {
    const octets = Buffer.concat([UDH8, Buffer.from('00480069', 'hex')]);
    const frame = packageSubmitSm({
      service_type: 'CMT', source_addr_ton: 5, source_addr_npi: 0, source_addr: 'Acme', dest_addr_ton: 1, dest_addr_npi: 1,
      destination_addr: '353871234567', esm_class: 0x40, protocol_id: 0, priority_flag: 1,
      schedule_delivery_time: '', validity_period: '000001000000000R', registered_delivery: 1, data_coding: 8, short_message: octets,
    }, 1234);
    const decoded = decodeSubmitSm(frame);
    expect(decoded).toEqual({
      kind: 'submit_sm',
      sequenceNumber: 1234,
      fields: {
        serviceType: 'CMT', sourceAddrTon: 5, sourceAddrNpi: 0, sourceAddr: 'Acme', destAddrTon: 1, destAddrNpi: 1,
        destinationAddr: '353871234567', esmClass: 0x40, protocolId: 0, priorityFlag: 1, scheduleDeliveryTime: '',
        validityPeriod: '000001000000000R', registeredDelivery: 1, dataCoding: 8, shortMessage: octets,
      },
    });
  });

  it('reads message_payload and the SAR TLVs', () => {
    const payload = Buffer.alloc(400, 0x41);
    const frame = packageSubmitSm({
      destination_addr: '353871234567', short_message: Buffer.alloc(0), message_payload: payload,
      sar_msg_ref_num: 0xbeef, sar_total_segments: 3, sar_segment_seqnum: 2,
    });
    const decoded = decodeSubmitSm(frame);
    expect(decoded.kind).toBe('submit_sm');
    if (decoded.kind !== 'submit_sm') return;
    expect(decoded.fields.shortMessage.length).toBe(0);
    expect(decoded.fields.messagePayload).toEqual(payload);
    expect(decoded.fields.sar).toEqual({ reference: 0xbeef, total: 3, sequence: 2 });
  });

  it('skips TLVs it does not use', () => {
    const frame = packageSubmitSm({ destination_addr: '1', short_message: Buffer.from('hi'), user_message_reference: 9 });
    const decoded = decodeSubmitSm(frame);
    expect(decoded.kind).toBe('submit_sm');
  });

  it('refuses SAR TLVs that do not come together, or a sequence past the total, with ESME_RINVOPTPARSTREAM', () => {
    const lone = decodeSubmitSm(packageSubmitSm({ destination_addr: '1', short_message: Buffer.from('a'), sar_msg_ref_num: 1 }));
    expect(lone).toMatchObject({ kind: 'refused', sequenceNumber: 42, status: SERVER_STATUS.invalidParameter });
    const past = decodeSubmitSm(packageSubmitSm({
      destination_addr: '1', short_message: Buffer.from('a'), sar_msg_ref_num: 1, sar_total_segments: 2, sar_segment_seqnum: 3,
    }));
    expect(past).toMatchObject({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
    // The one SAR range check (the intake trusts it): a total or sequence of 0 is refused here too.
    for (const [total, sequence] of [[0, 1], [2, 0]] as const) {
      const zero = decodeSubmitSm(packageSubmitSm({ destination_addr: '1', short_message: Buffer.from('a'), sar_msg_ref_num: 1, sar_total_segments: total, sar_segment_seqnum: sequence }));
      expect(zero).toMatchObject({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
    }
  });

  it('calls a body cut short undecodable (ESME_RINVCMDLEN) at every length before its end, echoing the sequence number', () => {
    const whole = packageSubmitSm({ destination_addr: '353871234567', short_message: Buffer.from('hello'), sar_msg_ref_num: 1, sar_total_segments: 1, sar_segment_seqnum: 1 }, 77);
    // The three SAR TLVs take 6, 5 and 5 octets: cut exactly between TLVs the frame is whole,
    // with no SAR (after the mandatory part) or an incomplete set of them (refused).
    const boundaries = [whole.length - 16, whole.length - 10, whole.length - 5];
    for (let length = 16; length < whole.length; length++) {
      const cut = Buffer.from(whole.subarray(0, length));
      cut.writeUInt32BE(length, 0);
      const decoded = decodeSubmitSm(cut);
      if (boundaries.includes(length)) {
        expect(decoded.kind, `cut at ${length}`).toBe(length === boundaries[0] ? 'submit_sm' : 'refused');
        continue;
      }
      expect(decoded, `cut at ${length}`).toMatchObject({ kind: 'undecodable', sequenceNumber: 77, nackStatus: COMMAND_STATUS_CODE.ESME_RINVCMDLEN });
    }
  });

  it('calls an sm_length past the frame undecodable', () => {
    const frame = packageSubmitSm({ destination_addr: '1', short_message: Buffer.from('hello') });
    const smLengthAt = frame.length - 'hello'.length - 1;
    frame[smLengthAt] = 200;
    expect(decodeSubmitSm(frame)).toMatchObject({ kind: 'undecodable', nackStatus: COMMAND_STATUS_CODE.ESME_RINVCMDLEN });
  });
});

describe('SubmitSmResp', () => {
  it('writes the same octets as the package, with and without a message id', () => {
    const request = new smpp.PDU(packageSubmitSm({ destination_addr: '1', short_message: Buffer.from('a') }, 9));
    expect(new SubmitSmResp(9, 0, 'abc-123').toBuffer()).toEqual(request.response({ message_id: 'abc-123' }).toBuffer());
    expect(new SubmitSmResp(9, SERVER_STATUS.throttled, '').toBuffer()).toEqual(request.response({ command_status: SERVER_STATUS.throttled }).toBuffer());
  });
});

describe('deliverSmParams', () => {
  const receipt = {
    sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'Acme',
    esmClass: 0x04, dataCoding: 0, shortMessageHex: Buffer.from('id:m1 stat:DELIVRD').toString('hex'), receiptedMessageId: 'm1', messageState: 2 as const,
  };

  it('encodes a receipt with its octets, receipted_message_id and message_state', () => {
    const built = deliverSmParams(receipt);
    expect(built.kind).toBe('ok');
    if (built.kind !== 'ok') return;
    const bytes = new smpp.PDU('deliver_sm', { ...built.params, sequence_number: 5 }).toBuffer();
    expect(bytes.includes(Buffer.from('id:m1 stat:DELIVRD'))).toBe(true);
    const decoded = new smpp.PDU(bytes);
    expect(decoded.esm_class).toBe(0x04);
    expect(decoded.data_coding).toBe(0);
    expect(decoded.receipted_message_id).toBe('m1');
    expect(decoded.message_state).toBe(2);
  });

  it('puts user data over 254 octets in message_payload', () => {
    const built = deliverSmParams({ ...receipt, esmClass: 0, shortMessageHex: 'ab'.repeat(300), receiptedMessageId: undefined, messageState: undefined });
    expect(built.kind).toBe('ok');
    if (built.kind !== 'ok') return;
    expect((built.params['short_message'] as Buffer).length).toBe(0);
    expect(built.params['message_payload']).toEqual(Buffer.alloc(300, 0xab));
  });

  it('refuses a shortMessageHex that is not hex octets', () => {
    expect(deliverSmParams({ ...receipt, shortMessageHex: 'abc' }).kind).toBe('invalid');
    expect(deliverSmParams({ ...receipt, shortMessageHex: 'zz' }).kind).toBe('invalid');
  });
});

describe('SubmitRate', () => {
  it('averages over the last ten seconds', () => {
    const rate = new SubmitRate();
    for (let i = 0; i < 50; i++) rate.record(100_000 + i * 100); // 50 in 5 s
    expect(rate.perSecond(104_999)).toBe(5);
    expect(rate.perSecond(109_999)).toBe(5);
    // 100 000-100 999 has left the window by 110 000.
    expect(rate.perSecond(110_000)).toBe(4);
    expect(rate.perSecond(200_000)).toBe(0);
  });
});

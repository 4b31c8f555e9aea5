/**
 * A deliver_sm typed as a receipt (esm_class 0x04) in data_coding 0 is not run through the smpp
 * package's GSM decoding (its coder lookup per receipt was ~4% of the gateway's CPU):
 * its text is the octets as received, so '@' and '_' (GSM 03.38 would read '¡' and '§') survive,
 * and an MO message in the same coding is still decoded as GSM.
 */
import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import { deliverSmText, receiptInput } from '../../../src/transports/smpp/deliver-sm.js';
import { decodeFrame } from '../../../src/transports/smpp/pdu-decoder.js';

const TEXT = 'id:ab_c@1 sub:001 dlvrd:001 submit date:2611230101 done date:2611230102 stat:DELIVRD err:000 text:';

function frame(esmClass: number, dataCoding: number, text: string): Buffer {
  return new smpp.PDU('deliver_sm', {
    sequence_number: 7, source_addr: '353871234567', destination_addr: 'Shop', esm_class: esmClass, data_coding: dataCoding,
    short_message: Buffer.from(text, 'latin1'),
  }).toBuffer();
}

describe('receipt deliver_sm decoding', () => {
  it('keeps a receipt text as its octets, without the package GSM-decoding it', () => {
    for (const dataCoding of [0x00, 0x01]) {
      const decoded = decodeFrame(frame(0x04, dataCoding, TEXT));
      if (decoded.kind !== 'pdu') throw new Error('not decoded');
      expect(decoded.pdu['short_message']).toEqual({ message: TEXT });
      expect(receiptInput(decoded.pdu).text).toBe(TEXT);
    }
  });

  it('still decodes a mobile-originated message in the SMSC default alphabet as GSM 03.38', () => {
    const decoded = decodeFrame(frame(0x00, 0x00, 'a@b'));
    if (decoded.kind !== 'pdu') throw new Error('not decoded');
    // Octet 0x40 is '¡' in GSM 03.38.
    expect(deliverSmText(decoded.pdu, 'inbound')).toBe('a¡b');
  });
});

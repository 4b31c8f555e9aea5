/**
 * deliver_sm as long as SMPP 3.4 allows (message_payload of 65,535 octets, §5.3.2.32) is framed and
 * decoded; a command_length past the longest legal PDU still ends the stream. And how an MO's user
 * data is read when its header cannot be, or when GSM-7 octets carry a top bit.
 */
import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import { encodeGsm7Septets } from '../../../src/sms/index.js';
import { FrameReader, MAX_COMMAND_LENGTH_BYTES } from '../../../src/transports/smpp/frame-reader.js';
import { inboundFromDeliverSm, type MoReadingNote } from '../../../src/transports/smpp/mo-user-data.js';
import { decodeFrame } from '../../../src/transports/smpp/pdu-decoder.js';
import { deliverSmText } from '../../../src/transports/smpp/deliver-sm.js';

function deliverSm(fields: Record<string, unknown>): Buffer {
  return new smpp.PDU('deliver_sm', { sequence_number: 7, source_addr: '353861234567', destination_addr: '50123', data_coding: 0, ...fields }).toBuffer();
}

function framesOf(bytes: Buffer, chunkOctets: number): { frames: Buffer[]; bad: unknown } {
  const reader = new FrameReader();
  const frames: Buffer[] = [];
  let bad: unknown = null;
  for (let at = 0; at < bytes.length; at += chunkOctets) bad = reader.push(bytes.subarray(at, at + chunkOctets), (frame) => frames.push(Buffer.from(frame))) ?? bad;
  return { frames, bad };
}

function read(frame: Buffer): { text: string; notes: MoReadingNote[] } {
  const decoded = decodeFrame(frame);
  if (decoded.kind !== 'pdu') throw new Error(`undecodable: ${decoded.reason}`);
  const notes: MoReadingNote[] = [];
  const message = inboundFromDeliverSm(decoded.pdu, deliverSmText(decoded.pdu, 'inbound'), '2026-01-01T00:00:00.000Z', (note) => notes.push(note));
  return { text: message.text, notes };
}

describe('long deliver_sm', () => {
  const text = 'x'.repeat(65_535);
  const pdu = deliverSm({ message_payload: Buffer.from(encodeGsm7Septets(text)) });

  it('frames a PDU with a 65,535-octet message_payload fed whole and in 1,000-octet chunks', () => {
    expect(pdu.length).toBeGreaterThan(65_535);
    expect(pdu.length).toBeLessThanOrEqual(MAX_COMMAND_LENGTH_BYTES);
    for (const chunk of [pdu.length, 1_000]) expect(framesOf(pdu, chunk)).toEqual({ frames: [pdu], bad: null });
  });

  it('decodes it (the smpp package alone refuses anything over 16,384 octets) and reads the whole text', () => {
    expect(read(pdu)).toEqual({ text, notes: [] });
  });

  it('still ends the stream at a command_length one past 66,560', () => {
    const header = Buffer.alloc(16);
    header.writeUInt32BE(MAX_COMMAND_LENGTH_BYTES + 1, 0);
    header.writeUInt32BE(0x00000005, 4);
    expect(MAX_COMMAND_LENGTH_BYTES).toBe(66_560);
    expect(framesOf(header, 16).bad).toEqual({ commandLength: MAX_COMMAND_LENGTH_BYTES + 1 });
  });
});

describe('MO user data that cannot be read as it says', () => {
  it('reads a header whose UDHL points past the end as text without a header, with a note', () => {
    const octets = Buffer.concat([Buffer.from([0x20, 0x00, 0x03]), Buffer.from(encodeGsm7Septets('Hello!'))]);
    expect(read(deliverSm({ esm_class: 0x40, short_message: octets }))).toEqual({
      text: ' @¥Hello!',
      notes: [{ kind: 'udh-unreadable', reason: expect.stringContaining('longer than the user data'), octets: 9 }],
    });
  });

  it('masks the top bit of GSM-7 octets above 0x7F and says how many', () => {
    const octets = Buffer.from(encodeGsm7Septets('Hi there'));
    for (const at of [0, 2, 5]) octets[at] = (octets[at] as number) | 0x80;
    expect(read(deliverSm({ short_message: octets }))).toEqual({ text: 'Hi there', notes: [{ kind: 'gsm7-top-bit-masked', octets: 3 }] });
  });
});

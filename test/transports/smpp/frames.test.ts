/**
 * Framing of the SMSC's byte stream: an impossible command_length drops the
 * link at once (unrecoverable), a sane frame the `smpp` package cannot decode is answered
 * generic_nack and the link kept (recoverable). The framer is fed whole and one byte at a time
 * (STYLE 8); the link behaviour runs over real loopback TCP, the SMSC writing raw bytes.
 */
import smpp from 'smpp';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameReader, MAX_COMMAND_LENGTH_BYTES, SMPP_HEADER_BYTES, type BadFrameLength } from '../../../src/transports/smpp/frame-reader.js';
import { decodeFrame } from '../../../src/transports/smpp/pdu-decoder.js';
import type { PartOutcome } from '../../../src/transports/transport.js';
import type { TestSmsc } from '../../support/smsc/test-smsc.js';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

const ESME_RINVCMDLEN = 0x02;
const ESME_RINVCMDID = 0x03;
/** Far below the default enquire_link interval (30 s) that used to be the only way out of a stalled read. */
const REBIND_WITHIN_MS = 5_000;

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function header(commandLength: number, commandId: number, sequenceNumber: number): Buffer {
  const pdu = Buffer.alloc(16);
  pdu.writeUInt32BE(commandLength, 0);
  pdu.writeUInt32BE(commandId, 4);
  pdu.writeUInt32BE(0, 8);
  pdu.writeUInt32BE(sequenceNumber, 12);
  return pdu;
}

/** A deliver_sm whose last TLV (user_message_reference, 2 octets) has its header but no value: the frame is sane, the body is not. */
function deliverSmWithTruncatedTlv(sequenceNumber: number): Buffer {
  const body = new smpp.PDU('deliver_sm', { sequence_number: sequenceNumber, source_addr: '353870000001', destination_addr: '12345', short_message: 'hi' }).toBuffer();
  const frame = Buffer.concat([body, Buffer.from([0x02, 0x04, 0x00, 0x02])]);
  frame.writeUInt32BE(frame.length, 0);
  return frame;
}

function enquireLink(sequenceNumber: number): Buffer {
  return header(16, 0x00000015, sequenceNumber);
}

type Fed = { frames: string[]; bad: BadFrameLength | null };

function feedWhole(stream: Buffer): Fed {
  const frames: string[] = [];
  const bad = new FrameReader().push(stream, (frame) => frames.push(frame.toString('hex')));
  return { frames, bad };
}

function feedByteAtATime(stream: Buffer): Fed {
  const reader = new FrameReader();
  const frames: string[] = [];
  let bad: BadFrameLength | null = null;
  for (let i = 0; i < stream.length; i++) {
    bad ??= reader.push(stream.subarray(i, i + 1), (frame) => frames.push(frame.toString('hex')));
  }
  return { frames, bad };
}

describe('FrameReader', () => {
  const fixtures: [string, Buffer, Fed][] = [
    [
      'three frames back to back',
      Buffer.concat([enquireLink(1), deliverSmWithTruncatedTlv(2), enquireLink(3)]),
      { frames: [enquireLink(1), deliverSmWithTruncatedTlv(2), enquireLink(3)].map((f) => f.toString('hex')), bad: null },
    ],
    ['a command_length of 2 after a good frame', Buffer.concat([enquireLink(1), header(2, 0x15, 2)]), { frames: [enquireLink(1).toString('hex')], bad: { commandLength: 2 } }],
    ['a command_length of 15', header(15, 0x15, 1), { frames: [], bad: { commandLength: 15 } }],
    ['a command_length over the maximum', header(MAX_COMMAND_LENGTH_BYTES + 1, 0x15, 1), { frames: [], bad: { commandLength: MAX_COMMAND_LENGTH_BYTES + 1 } }],
    ['an incomplete frame (nothing yet)', enquireLink(1).subarray(0, 15), { frames: [], bad: null }],
  ];

  for (const [name, stream, expected] of fixtures) {
    it(`${name}: the same result fed whole and one byte at a time`, () => {
      expect(feedWhole(stream)).toEqual(expected);
      expect(feedByteAtATime(stream)).toEqual(expected);
    });
  }

  it('accepts exactly the header length and exactly the maximum', () => {
    expect(feedWhole(enquireLink(1)).bad).toBeNull();
    const longest = Buffer.alloc(MAX_COMMAND_LENGTH_BYTES);
    header(MAX_COMMAND_LENGTH_BYTES, 0x15, 1).copy(longest);
    expect(feedWhole(longest)).toEqual({ frames: [longest.toString('hex')], bad: null });
    expect(SMPP_HEADER_BYTES).toBe(16);
  });

  it('ignores everything after an impossible length', () => {
    const reader = new FrameReader();
    const frames: Buffer[] = [];
    expect(reader.push(header(2, 0x15, 1), (frame) => frames.push(frame))).toEqual({ commandLength: 2 });
    expect(reader.push(enquireLink(2), (frame) => frames.push(frame))).toBeNull();
    expect(frames).toEqual([]);
  });
});

describe('decodeFrame', () => {
  it('decodes a sane PDU', () => {
    const decoded = decodeFrame(enquireLink(7));
    expect(decoded.kind === 'pdu' && decoded.pdu.command).toBe('enquire_link');
  });

  it('names ESME_RINVCMDLEN for a body shorter than its own fields, with the sequence number', () => {
    expect(decodeFrame(deliverSmWithTruncatedTlv(41))).toMatchObject({ kind: 'undecodable', sequenceNumber: 41, isResponse: false, nackStatus: ESME_RINVCMDLEN });
  });

  it('names ESME_RINVCMDID for an unknown command id, request or response', () => {
    expect(decodeFrame(header(16, 0x00000099, 5))).toMatchObject({ kind: 'undecodable', sequenceNumber: 5, isResponse: false, nackStatus: ESME_RINVCMDID });
    expect(decodeFrame(header(16, 0x80000099, 6))).toMatchObject({ kind: 'undecodable', sequenceNumber: 6, isResponse: true });
  });
});

function writeToEsme(smsc: TestSmsc, bytes: Buffer): void {
  const [session] = smsc.boundSessions();
  if (session === undefined) throw new Error('no bound session');
  smsc.socketOf(session.id).write(bytes);
}

function acceptedId(outcomes: PartOutcome[]): string {
  const [outcome] = outcomes;
  if (outcome?.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.messageId;
}

describe('SMPP link framing over loopback TCP', () => {
  for (const commandLength of [2, 0, MAX_COMMAND_LENGTH_BYTES + 1]) {
    it(`drops the link on a command_length of ${commandLength}, rebinds and submits again`, async () => {
      rig = await startRig();
      expect(rig.smsc.bindAttempts).toHaveLength(1);
      writeToEsme(rig.smsc, header(commandLength, 0x00000015, 9));
      // Dropped and bound again, well before enquire_link (30 s by default) could notice.
      await waitFor(() => rig!.smsc.bindAttempts.length === 2 && rig!.transport.currentState().state === 'bound', 'a rebind', REBIND_WITHIN_MS);
      expect(rig.transport.links()[0]?.lastError).toContain(`INVALID_COMMAND_LENGTH: ${commandLength}`);
      expect(acceptedId(await rig.transport.submit(outbound('after the bad frame')))).toMatch(/^\d+$/);
    });
  }

  it('a frame split over many writes is read whole (enquire_link answered)', async () => {
    rig = await startRig();
    const frame = enquireLink(31);
    for (let i = 0; i < frame.length; i++) writeToEsme(rig.smsc, frame.subarray(i, i + 1));
    await waitFor(() => rig!.smsc.pdus('enquire_link_resp').some((pdu) => pdu.sequenceNumber === 31), 'enquire_link_resp 31');
    expect(rig.smsc.bindAttempts).toHaveLength(1);
  });

  it('answers a sane but undecodable deliver_sm with generic_nack ESME_RINVCMDLEN and its sequence number, and keeps the bind', async () => {
    rig = await startRig();
    writeToEsme(rig.smsc, deliverSmWithTruncatedTlv(4242));
    await waitFor(() => rig!.smsc.pdus('generic_nack').length === 1, 'generic_nack');
    expect(rig.smsc.pdus('generic_nack')).toMatchObject([{ sequenceNumber: 4242, commandStatus: ESME_RINVCMDLEN }]);
    expect(rig.handlers.receipts).toHaveLength(0);
    expect(acceptedId(await rig.transport.submit(outbound('bind kept')))).toMatch(/^\d+$/);
    expect(rig.smsc.bindAttempts).toHaveLength(1);
    expect(rig.transport.currentState().state).toBe('bound');
  });
});

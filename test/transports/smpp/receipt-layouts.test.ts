/**
 * Receipt texts written as other SMSCs write them (test/receipts/fixtures/other-smscs.ts), sent
 * by the test SMSC as real deliver_sm PDUs over loopback: each once whole and once one byte at a
 * time through the socket, and both must give the same receipt with the fixture's status.
 */
import smpp from 'smpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDeliveredStatus, normalizeMessageId } from '../../../src/receipts/index.js';
import { OTHER_SMSC_RECEIPTS } from '../../receipts/fixtures/other-smscs.js';
import { startRig, waitFor, type Rig } from './helpers.js';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig.close();
});

let sequence = 500;

describe('receipts in other SMSCs\' layouts over SMPP', () => {
  it.each(OTHER_SMSC_RECEIPTS.map((fixture) => [fixture.name, fixture] as const))('%s', async (_name, fixture) => {
    const before = rig.handlers.receipts.length;
    const pdu = new smpp.PDU('deliver_sm', { sequence_number: sequence++, esm_class: 0x04, data_coding: 0, short_message: Buffer.from(fixture.text, 'latin1') });
    const bytes = pdu.toBuffer();
    const socket = rig.smsc.socketOf(rig.smsc.boundSessions()[0]!.id);
    socket.write(bytes);
    await waitFor(() => rig.handlers.receipts.length === before + 1, 'whole receipt');
    for (const byte of bytes) {
      socket.write(Buffer.of(byte));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await waitFor(() => rig.handlers.receipts.length === before + 2, 'byte-at-a-time receipt');
    const [whole, byByte] = rig.handlers.receipts.slice(before);
    expect(byByte).toEqual(whole);
    expect(whole).toMatchObject({ messageId: normalizeMessageId(fixture.expected.id), status: fixture.expected.stat, final: true });
    expect(isDeliveredStatus(whole!.status)).toBe(true);
    if (fixture.expected.err !== undefined) expect(whole!.errorCode).toBe(fixture.expected.err);
  });
});

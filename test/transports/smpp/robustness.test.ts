/**
 * What real SMSCs send that the happy path does not: generic_nack to a submit, commands the ESME
 * does not support, an OK submit_sm_resp without a message id, alert_notification, receipt ids
 * in another number base, and receipts whose text is UCS-2.
 */
import smpp from 'smpp';
import { afterEach, describe, expect, it } from 'vitest';
import type { PartOutcome } from '../../../src/transports/transport.js';
import type { TestSmsc } from '../../support/smsc/test-smsc.js';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ESME_RINVCMDID = 0x03;
const ESME_RSYSERR = 0x08;

function acceptedId(outcomes: PartOutcome[]): string {
  const [outcome] = outcomes;
  if (outcome?.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.messageId;
}

/** Writes a PDU to the ESME as raw bytes on the bound session. */
function writeToEsme(smsc: TestSmsc, pdu: Buffer): void {
  const [session] = smsc.boundSessions();
  if (session === undefined) throw new Error('no bound session');
  smsc.socketOf(session.id).write(pdu);
}

/** A PDU with only a header: command_length 16 (SMPP 3.4 §3.2). */
function headerOnly(commandId: number, sequenceNumber: number): Buffer {
  const pdu = Buffer.alloc(16);
  pdu.writeUInt32BE(16, 0);
  pdu.writeUInt32BE(commandId, 4);
  pdu.writeUInt32BE(0, 8);
  pdu.writeUInt32BE(sequenceNumber, 12);
  return pdu;
}

describe('SMSC behaviour beyond the happy path', () => {
  it('generic_nack to a submit_sm: the part fails temporarily, the link stays up and the retry goes through', async () => {
    let nacks = 1;
    rig = await startRig({ onSubmit: () => (nacks-- > 0 ? { kind: 'generic_nack', commandStatus: ESME_RSYSERR } : { kind: 'ok' }) });
    expect(await rig.transport.submit(outbound('x'))).toEqual([{ part: 1, kind: 'temporary', status: 'GENERIC_NACK', errorCode: ESME_RSYSERR }]);
    expect(acceptedId(await rig.transport.submit(outbound('x')))).toBe('4000000000');
    expect(rig.smsc.bindAttempts).toHaveLength(1);
  });

  it('answers an unknown command id with generic_nack ESME_RINVCMDID and keeps the link', async () => {
    rig = await startRig();
    writeToEsme(rig.smsc, headerOnly(0x00000099, 77));
    await waitFor(() => rig!.smsc.pdus('generic_nack').length === 1, 'generic_nack');
    expect(rig.smsc.pdus('generic_nack')).toMatchObject([{ sequenceNumber: 77, commandStatus: ESME_RINVCMDID }]);
    expect(acceptedId(await rig.transport.submit(outbound('x')))).toBe('4000000000');
    expect(rig.smsc.bindAttempts).toHaveLength(1);
  });

  it('answers a known command it does not support (query_sm, outbind) with generic_nack ESME_RINVCMDID', async () => {
    rig = await startRig();
    writeToEsme(rig.smsc, new smpp.PDU('query_sm', { sequence_number: 5, message_id: '1' }).toBuffer());
    writeToEsme(rig.smsc, new smpp.PDU('outbind', { sequence_number: 6, system_id: 'smsc' }).toBuffer());
    await waitFor(() => rig!.smsc.pdus('generic_nack').length === 2, 'two generic_nack');
    expect(rig.smsc.pdus('generic_nack').map((pdu) => [pdu.sequenceNumber, pdu.commandStatus])).toEqual([[5, ESME_RINVCMDID], [6, ESME_RINVCMDID]]);
    expect(rig.transport.currentState().state).toBe('bound');
  });

  it('accepts a part whose OK submit_sm_resp has an empty message_id (the SMSC has it; resending would duplicate)', async () => {
    rig = await startRig({ onSubmit: () => ({ kind: 'ok', messageId: '' }) });
    expect(await rig.transport.submit(outbound('x'))).toEqual([{ part: 1, kind: 'accepted', messageId: '' }]);
  });

  it('ignores alert_notification (no response) and keeps the link', async () => {
    rig = await startRig();
    writeToEsme(rig.smsc, new smpp.PDU('alert_notification', { sequence_number: 9, source_addr: '353870000001', esme_addr: 'esme' }).toBuffer());
    expect(acceptedId(await rig.transport.submit(outbound('x')))).toBe('4000000000');
    const answers = rig.smsc.received.filter((pdu) => pdu.sequenceNumber === 9);
    expect(answers).toEqual([]);
    expect(rig.smsc.bindAttempts).toHaveLength(1);
  });

  it('messageIdFormat dec-to-hex: a decimal id in the receipt text matches the hex submit_sm_resp id', async () => {
    rig = await startRig({ idFormat: 'hex', receiptIdFormat: 'decimal', autoReceipt: { stat: 'DELIVRD' } }, { messageIdFormat: 'dec-to-hex' });
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    expect(messageId).toBe('EE6B2800');
    await waitFor(() => rig!.handlers.receipts.length === 1, 'receipt');
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId, status: 'DELIVRD' });
    expect(rig.handlers.receipts[0]!.raw).toContain('id:4000000000 ');
  });

  it('messageIdFormat hex-to-dec: a hex id in the receipt text matches the decimal submit_sm_resp id', async () => {
    rig = await startRig({ idFormat: 'decimal', receiptIdFormat: 'hex', autoReceipt: { stat: 'UNDELIV', err: '001' } }, { messageIdFormat: 'hex-to-dec' });
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    await waitFor(() => rig!.handlers.receipts.length === 1, 'receipt');
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId, status: 'UNDELIV', final: true, errorCode: '001' });
    expect(rig.handlers.receipts[0]!.raw).toContain('id:EE6B2800 ');
  });

  it('reads a receipt sent as data_sm (text in message_payload, TLVs) and answers data_sm_resp', async () => {
    rig = await startRig();
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    const status = await rig.smsc.sendDeliverSm(
      {
        source_addr: '353871234567', destination_addr: 'smsgate', esm_class: 0x04, data_coding: 0,
        message_payload: Buffer.from(`id:${messageId} sub:001 dlvrd:000 submit date:2311211530 done date:2311211531 stat:EXPIRED err:000 text:`, 'latin1'),
        receipted_message_id: messageId, message_state: 3,
      },
      'data_sm',
    );
    expect(status).toBe(0);
    expect(rig.handlers.receipts).toEqual([expect.objectContaining({ messageId, status: 'EXPIRED', final: true })]);
    expect(rig.smsc.pdus('data_sm_resp')).toHaveLength(1);
  });

  it('hands an MO data_sm to onInbound', async () => {
    rig = await startRig();
    const status = await rig.smsc.sendDeliverSm(
      { source_addr: '353870000001', destination_addr: '50123', esm_class: 0, data_coding: 8, message_payload: Buffer.from('00480069', 'hex') },
      'data_sm',
    );
    expect(status).toBe(0);
    expect(rig.handlers.inbound).toEqual([{ from: '353870000001', to: '50123', text: 'Hi' }]);
  });

  it('reads a receipt whose short_message is UCS-2 (data_coding 8)', async () => {
    rig = await startRig();
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    const text = `id:${messageId} sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:DELIVRD err:000 text:Привет`;
    const utf16be = Buffer.from(text, 'utf16le').swap16();
    const status = await rig.smsc.sendDeliverSm({ esm_class: 0x04, data_coding: 8, short_message: utf16be });
    expect(status).toBe(0);
    expect(rig.handlers.receipts).toHaveLength(1);
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId, status: 'DELIVRD', final: true, errorCode: '000', doneAt: expect.any(String) });
    expect(rig.handlers.receipts[0]!.raw).toBe(text);
  });
});

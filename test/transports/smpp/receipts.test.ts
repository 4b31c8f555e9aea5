import smpp from 'smpp';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeMessageId } from '../../../src/receipts/index.js';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function acceptedId(outcomes: PartOutcome[]): string {
  const [outcome] = outcomes;
  if (outcome?.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.messageId;
}

describe('receipts', () => {
  it('emits a text-only receipt with the accepted id, then answers deliver_sm_resp OK', async () => {
    rig = await startRig({ autoReceipt: { stat: 'DELIVRD' } });
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    await waitFor(() => rig!.smsc.deliverResponses.length === 1, 'deliver_sm_resp');
    expect(rig.smsc.deliverResponses).toEqual([0]);
    expect(rig.handlers.receipts).toEqual([
      expect.objectContaining({ messageId, status: 'DELIVRD', final: true, errorCode: '000', doneAt: '2023-11-21T15:30:00.000Z' }),
    ]);
    expect(rig.handlers.receipts[0]!.raw).toMatch(/^id:\d+ sub:001/);
  });

  it('prefers the TLVs and maps message_state 5 to UNDELIV', async () => {
    rig = await startRig({ autoReceipt: { stat: 'UNDELIV', tlvs: true } });
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    await waitFor(() => rig!.handlers.receipts.length === 1, 'receipt');
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId, status: 'UNDELIV', final: true });
  });

  it('matches the receipt id to the accepted id when the receipt arrives before submit_sm_resp', async () => {
    rig = await startRig({ autoReceipt: { stat: 'DELIVRD', beforeResponse: true } });
    const order: string[] = [];
    const handlers = rig.handlers;
    const onReceipt = handlers.onReceipt.bind(handlers);
    handlers.onReceipt = async (receipt) => {
      order.push('receipt');
      await onReceipt(receipt);
    };
    const submitted = rig.transport.submit(outbound('x')).then((outcomes) => {
      order.push('accepted');
      return outcomes;
    });
    const messageId = acceptedId(await submitted);
    await waitFor(() => handlers.receipts.length === 1, 'receipt');
    expect(order).toEqual(['receipt', 'accepted']);
    expect(handlers.receipts[0]!.messageId).toBe(messageId);
  });

  it.each([
    ['decimal', 'hex', 'hex-to-dec'],
    ['hex', 'decimal', 'dec-to-hex'],
  ] as const)('submit_sm_resp ids in %s, receipt ids in %s: %s makes them match', async (idFormat, receiptIdFormat, messageIdFormat) => {
    rig = await startRig({ idFormat, receiptIdFormat, autoReceipt: { stat: 'DELIVRD', tlvs: true } }, { messageIdFormat });
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    await waitFor(() => rig!.handlers.receipts.length === 1, 'receipt');
    expect(rig.handlers.receipts[0]!.messageId).toBe(messageId);
    expect(rig.handlers.receipts[0]!.raw).not.toContain(`id:${rig.smsc.submits[0]!.messageId} `);
  });

  it('answers ESME_RX_T_APPN when the receipt could not be stored, so the SMSC retries', async () => {
    rig = await startRig();
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    rig.handlers.failReceipts = true;
    expect(await rig.smsc.sendReceipt(rig.smsc.submits[0]!.messageId!, { stat: 'DELIVRD' })).toBe(0x64);
    rig.handlers.failReceipts = false;
    expect(await rig.smsc.sendReceipt(rig.smsc.submits[0]!.messageId!, { stat: 'DELIVRD' })).toBe(0);
    expect(rig.handlers.receipts.map((receipt) => receipt.messageId)).toEqual([messageId]);
  });

  it('does not acknowledge a receipt that arrives before handlers are set', async () => {
    const { SmppTransport } = await import('../../../src/transports/smpp/index.js');
    const { TestSmsc } = await import('../../support/smsc/test-smsc.js');
    const { smppConfig } = await import('./helpers.js');
    const smsc = await TestSmsc.start();
    const transport = new SmppTransport(smppConfig(smsc));
    await transport.start();
    try {
      expect(await smsc.sendReceipt('123', { stat: 'DELIVRD' })).toBe(0x64);
    } finally {
      await transport.stop(100);
      await smsc.stop();
    }
  });

  it('matches an early receipt with ids in another base (hex resp, decimal receipt TLV)', async () => {
    rig = await startRig(
      { idFormat: 'hex', receiptIdFormat: 'decimal', autoReceipt: { stat: 'DELIVRD', tlvs: true, beforeResponse: true } },
      { messageIdFormat: 'dec-to-hex' },
    );
    const messageId = acceptedId(await rig.transport.submit(outbound('x')));
    await waitFor(() => rig!.handlers.receipts.length === 1, 'receipt');
    expect(rig.handlers.receipts[0]!.messageId).toBe(messageId);
  });

  it('refuses a receipt without any message id with ESME_RX_P_APPN', async () => {
    rig = await startRig();
    const status = await rig.smsc.sendDeliverSm({ esm_class: 0x04, data_coding: 0, short_message: Buffer.from('stat:DELIVRD err:000') });
    expect(status).toBe(0x65);
    expect(rig.handlers.receipts).toHaveLength(0);
  });

  it('reads the receipt text as ASCII even where GSM 03.38 differs (_ and @ in ids)', async () => {
    rig = await startRig();
    await rig.smsc.sendDeliverSm({ esm_class: 0x04, data_coding: 0, short_message: Buffer.from('id:ab_c@1 stat:DELIVRD', 'latin1') });
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId: normalizeMessageId('ab_c@1'), status: 'DELIVRD' });
  });

  it('treats an intermediate notification (esm_class 0x20) as a non-final receipt', async () => {
    rig = await startRig();
    await rig.smsc.sendDeliverSm({ esm_class: 0x20, data_coding: 0, short_message: Buffer.from('id:77 stat:ENROUTE') });
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId: '77', status: 'ENROUTE', final: false });
  });

  it('hands an MO deliver_sm to onInbound, then answers OK', async () => {
    rig = await startRig();
    const status = await rig.smsc.sendDeliverSm({
      source_addr: '353870000001',
      destination_addr: '50123',
      esm_class: 0,
      data_coding: 8,
      short_message: Buffer.from('00480069002004360436', 'hex'),
    });
    expect(status).toBe(0);
    expect(rig.handlers.inbound).toEqual([{ from: '353870000001', to: '50123', text: 'Hi жж' }]);
    expect(rig.handlers.receipts).toHaveLength(0);
  });

  it('parses a receipt PDU that arrives one byte at a time the same as one that arrives whole', async () => {
    rig = await startRig();
    const text = 'id:123456 sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:EXPIRED err:027 text:abc';
    const pdu = new smpp.PDU('deliver_sm', { sequence_number: 90, esm_class: 0x04, data_coding: 0, short_message: Buffer.from(text) });
    const bytes = pdu.toBuffer();
    const session = rig.smsc.boundSessions()[0]!;
    const socket = rig.smsc.socketOf(session.id);
    socket.write(bytes);
    await waitFor(() => rig!.handlers.receipts.length === 1, 'whole receipt');
    for (const byte of bytes) {
      socket.write(Buffer.of(byte));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await waitFor(() => rig!.handlers.receipts.length === 2, 'byte-at-a-time receipt');
    expect(rig.handlers.receipts[1]).toEqual(rig.handlers.receipts[0]);
    expect(rig.handlers.receipts[0]).toMatchObject({ messageId: '123456', status: 'EXPIRED', final: true, errorCode: '027' });
  });
});

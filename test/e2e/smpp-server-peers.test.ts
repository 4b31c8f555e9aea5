/**
 * The third-party customers the SMPP server's end-to-end tests use, checked on their own against
 * our test SMSC (an SMPP server too), so a failure there is the server's and not the harness's:
 * - Perl Net::SMPP as the customer ESME (test/support/perl-esme): its binds and their statuses,
 *   long messages cut by 8-bit and 16-bit UDH, SAR TLVs and message_payload in data codings 0, 3
 *   and 8 arriving at the SMSC octet for octet, receipts read with their TLVs, a deliver_sm
 *   refused so the SMSC sends it again, unbind;
 * - Kannel (bearerbox + smsbox) as the customer (test/support/kannel-customer.ts): messages sent
 *   through its sendsms arrive at the SMSC once each, and every DLR reaches its dlr-url.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KannelCustomer } from '../support/kannel-customer.js';
import { CUT_CASES, cutMessage } from '../support/perl-esme/customer-cut.js';
import { PerlEsme } from '../support/perl-esme/perl-esme.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { TLV_TAG } from '../support/smsc/pdu-framer.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from './e2e-setup.js';
import { expectCutCarried, expectOneReceiptEach } from './smpp-server-setup.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function testSmsc(): Promise<TestSmsc> {
  const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD', tlvs: true } });
  stops.push(() => smsc.stop());
  return smsc;
}

async function esmeOn(smsc: TestSmsc, bind: 'transmitter' | 'receiver' | 'transceiver', password = 'secret'): Promise<PerlEsme> {
  const esme = await PerlEsme.connect({ ...smsc.address, bind, systemId: 'esme', password });
  stops.push(() => esme.stop());
  return esme;
}

describe('Perl Net::SMPP customer ESME against the test SMSC', () => {
  it('binds as transmitter, receiver and transceiver, reports a refused bind, and unbinds', async () => {
    const smsc = await testSmsc();
    for (const bind of ['transmitter', 'receiver', 'transceiver'] as const) {
      const esme = await esmeOn(smsc, bind);
      expect(esme.bindStatus).toBe(0);
      expect(await esme.unbind()).toBe(0);
    }
    expect(smsc.bindAttempts.map((b) => [b.command, b.accepted])).toEqual([
      ['bind_transmitter', true], ['bind_receiver', true], ['bind_transceiver', true],
    ]);
    const refused = await esmeOn(smsc, 'transceiver', 'wrong');
    // The test SMSC answers a wrong password with ESME_RINVPASWD.
    expect(refused.bindStatus).toBe(0x0e);
  });

  it('sends long messages as it cut them (UDH 8/16-bit, SAR, message_payload; data_coding 0, 3, 8) and reads each receipt', async () => {
    const smsc = await testSmsc();
    const esme = await esmeOn(smsc, 'transceiver');
    const cases = CUT_CASES;
    const sms = cases.flatMap((c, i) => cutMessage({ ...c, source: 'Shop', destination: `44770090010${i}`, reference: 300 + i, charsPerPart: 50 }));
    expect(sms.length).toBeGreaterThan(cases.length);
    const resps = await esme.submitAll(sms);
    expect(resps.every((r) => r.status === 0 && r.messageId !== '')).toBe(true);
    expect(new Set(resps.map((r) => r.messageId)).size).toBe(sms.length);

    // Octet for octet at the SMSC, in order: esm_class, data_coding, short_message (UDH included), the TLVs.
    expect(smsc.submits).toHaveLength(sms.length);
    smsc.submits.forEach((submit, i) => {
      const sent = sms[i]!;
      expect(submit.wire.destination_addr).toBe(sent.destination_addr);
      expect(submit.wire.source_addr).toBe('Shop');
      expect(submit.wire.esm_class).toBe(sent.esm_class);
      expect(submit.wire.data_coding).toBe(sent.data_coding);
      expect(submit.wire.registered_delivery).toBe(1);
      expect(submit.wire.short_message.toString('hex')).toBe(sent.short_message);
      if (sent.sar !== undefined) {
        expect(submit.wire.tlvs.get(TLV_TAG.sar_msg_ref_num)?.readUInt16BE(0)).toBe(sent.sar[0]);
        expect(submit.wire.tlvs.get(TLV_TAG.sar_total_segments)?.readUInt8(0)).toBe(sent.sar[1]);
        expect(submit.wire.tlvs.get(TLV_TAG.sar_segment_seqnum)?.readUInt8(0)).toBe(sent.sar[2]);
      }
      if (sent.message_payload !== undefined) expect(submit.wire.tlvs.get(TLV_TAG.message_payload)?.toString('hex')).toBe(sent.message_payload);
    });
    // The comparison the server's tests make (parts in any order), checked here where the cut is the ESME's own.
    for (const destination of new Set(sms.map((sm) => sm.destination_addr))) {
      expectCutCarried(smsc.submits.filter((s) => s.wire.destination_addr === destination), sms.filter((sm) => sm.destination_addr === destination));
    }
    expect(() => expectCutCarried(smsc.submits.slice(1, 3), sms.slice(1, 3).reverse().map((sm, i) => (i === 0 ? { ...sm, data_coding: 3 } : sm)))).toThrow();

    await esme.waitUntil(() => esme.receipts().length >= sms.length, 10_000, 'a receipt per part');
    expectOneReceiptEach(esme, new Set(resps.map((r) => r.messageId)));
    expect(smsc.deliverResponses.every((status) => status === 0)).toBe(true);
  });

  it('answers deliver_sm with a chosen status, so the sender offers it again', async () => {
    const smsc = await ReceiptingSmsc.start();
    stops.push(() => smsc.stop());
    const esme = await PerlEsme.bind({ ...smsc.address, bind: 'transceiver', systemId: 'esme', password: 'secret', deliverStatus: 0x08 });
    stops.push(() => esme.stop());
    const [resp] = await esme.submitAll(cutMessage({ text: 'Retry me', scheme: 'single', dataCoding: 0, source: 'Shop', destination: '447700900200' }));
    await esme.waitUntil(() => esme.deliveries().length >= 2, 10_000, 'the receipt refused, then offered again');
    expect(esme.deliveries().every((d) => d.answered === 0x08)).toBe(true);
    await esme.setDeliverStatus(0);
    await esme.waitUntil(() => esme.acknowledgedReceiptIds().has(resp!.messageId), 10_000, 'the receipt acknowledged');
    await until(() => smsc.receiptsAcknowledged, (n) => n === 1, 5_000, 'the SMSC to see the acknowledgement');
  });
});

describe('Kannel as the customer against the test SMSC', () => {
  it('sends each message once through sendsms and every DLR reaches the dlr-url', async () => {
    const smsc = await ReceiptingSmsc.start();
    stops.push(() => smsc.stop());
    const receiver = await WebhookReceiver.start();
    stops.push(() => receiver.close());
    const kannel = await KannelCustomer.start({ smsc: { ...smsc.address, systemId: 'esme', password: 'secret' }, dlrUrl: receiver.url });
    stops.push(() => kannel.stop());
    await kannel.waitUntilOnline(20_000);
    const numbers = ['447700900301', '447700900302', '447700900303'];
    for (const to of numbers) expect(await kannel.send({ from: 'Shop', to, text: `Hello ${to}` })).toBe(202);
    await receiver.waitUntil(() => kannel.dlrsFrom(receiver).filter((d) => d.type === 1).length >= numbers.length, 20_000, 'a delivered DLR per message');
    expect(Object.fromEntries(smsc.submitsByDestination)).toEqual(Object.fromEntries(numbers.map((n) => [n, 1])));
    const delivered = kannel.dlrsFrom(receiver).filter((d) => d.type === 1);
    expect(new Set(delivered.map((d) => d.to))).toEqual(new Set(numbers));
    // %F is the id the SMSC gave in submit_sm_resp (the receipting SMSC numbers them from 1), kept as a string.
    expect(delivered.map((d) => d.smscMessageId).sort()).toEqual(['1', '2', '3']);
    expect(delivered.every((d) => d.text.includes('stat:DELIVRD'))).toBe(true);
  }, 60_000);
});

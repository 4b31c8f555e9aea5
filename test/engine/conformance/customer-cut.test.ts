/**
 * Engine conformance: a message an SMPP customer cut itself (campaigns.smpp_submit holds its
 * CustomerCut) goes upstream as they cut it, on both backends, over real SMPP on loopback to a
 * test SMSC that records every submit_sm's octets: the customer's UDH (8 or 16-bit reference) or
 * SAR TLVs and data_coding (0, 3, 8), byte for byte, whatever the carrier's own concatenation and
 * GSM-7 coding; a message_payload without a header split by the SMS core as any text; a part that
 * does not fit one SMS failed permanently, never re-cut; receipts and retries as any part's.
 *
 * The rows are written as the SMPP server's intake leaves them (a campaign of one recipient whose
 * smpp_submit is set, its part queued: seedIntakeCut) or made ready for the engine to
 * materialise (seedReadyCut), so both ways the engine reads a campaign's texts carry the cut.
 */
import { afterEach, expect, it } from 'vitest';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { TestSmsc, type RecordedSubmit, type TestSmscOptions } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { allFinal, describeEngineConformance, until, type EngineRig } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The CustomerCut JSON as the intake stores it (src/smpp-server/contracts.ts). */
interface StoredCut {
  dataCoding: 0 | 3 | 8;
  concat: { scheme: 'udh8' | 'udh16' | 'sar'; reference: number; total: number; sequence: number } | null;
  registeredDelivery: number;
  sourceAddrTon: number;
  sourceAddrNpi: number;
}

function cut(dataCoding: 0 | 3 | 8, concat: StoredCut['concat']): StoredCut {
  return { dataCoding, concat, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 };
}

/** A ready campaign of one recipient with its cut, for the engine to materialise. */
async function seedReadyCut(rig: EngineRig, clientId: number, text: string, stored: StoredCut, msisdn: string): Promise<string> {
  const campaignId = await rig.seedCampaign({ clientId, text, msisdns: [msisdn], ready: false });
  await rig.sql('UPDATE campaigns SET smpp_submit = ? WHERE id = ?', [JSON.stringify(stored), campaignId]);
  const nowMs = Date.now();
  await rig.stores.campaigns.markReady({
    campaignId, totalSent: 1, textSent: text, encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: nowMs, skippedCount: 0, readyAtMs: nowMs,
  });
  rig.engine.wake();
  return campaignId;
}

/**
 * As the SMPP server's intake leaves an accepted submit_sm: the campaign's one recipient
 * dispatched and its one part queued on the transport already, so the lane plans it from the
 * campaign's texts (never through materialising).
 */
async function seedIntakeCut(rig: EngineRig, clientId: number, text: string, stored: StoredCut, msisdn: string, transport: string): Promise<string> {
  const campaignId = await rig.seedCampaign({ clientId, text, msisdns: [msisdn], ready: false });
  await rig.sql('UPDATE campaigns SET smpp_submit = ? WHERE id = ?', [JSON.stringify(stored), campaignId]);
  const nowMs = Date.now();
  const [recipient] = await rig.recipients(campaignId);
  await rig.stores.dispatch.insertPart({
    recipientId: recipient!.id, campaignId, partNumber: 1, partsTotal: 1, concatReference: 7, transport, state: 'queued',
    lastStatus: null, nextAttemptAt: nowMs, finalAt: null,
  }, nowMs);
  await rig.stores.dispatch.markRecipientDispatched(recipient!.id, nowMs);
  await rig.stores.campaigns.markReady({
    campaignId, totalSent: 1, textSent: text, encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: nowMs, skippedCount: 0, readyAtMs: nowMs,
  });
  rig.engine.wake();
  return campaignId;
}

async function receiptingSmsc(onSubmit?: TestSmscOptions['onSubmit']): Promise<TestSmsc> {
  const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' }, ...(onSubmit === undefined ? {} : { onSubmit }) });
  cleanups.push(() => smsc.stop());
  return smsc;
}

/** What the customer cares about in a submit_sm as the SMSC got it. */
function wire(submit: RecordedSubmit): { esmClass: number; dataCoding: number; shortMessage: string; tlvs: Record<string, string> } {
  const tlvs: Record<string, string> = {};
  for (const [tag, value] of submit.wire.tlvs) tlvs[tag.toString(16).padStart(4, '0')] = value.toString('hex');
  return { esmClass: submit.wire.esm_class, dataCoding: submit.wire.data_coding, shortMessage: submit.wire.short_message.toString('hex'), tlvs };
}

const submitsTo = (smsc: TestSmsc, msisdn: string): RecordedSubmit[] => smsc.submits.filter((s) => s.wire.destination_addr === msisdn);

describeEngineConformance('engine: a customer\'s own cut upstream', (open) => {
  it('sends each customer part with its UDH or SAR TLVs and data_coding byte for byte, over the carrier\'s own concatenation and coding, and every receipt comes back', async () => {
    const rig = await open();
    const smsc = await receiptingSmsc();
    // The carrier's own settings differ from every customer's: SAR concatenation, Latin-1 for GSM-7 text.
    const carrier = new SmppTransport(smppConfig(smsc, { name: 'carrier', concatenation: 'sar', dataCoding: { gsm7: 3 } }));
    await rig.startEngine({ transports: [carrier] });
    const clientId = await rig.seedClient();

    // udh8, data_coding 0: '@' is septet 0x00 (GSM 03.38), not the carrier's Latin-1 0x40.
    const udh8 = await seedReadyCut(rig, clientId, 'Hi @ 2', cut(0, { scheme: 'udh8', reference: 0x42, total: 3, sequence: 2 }), '353870000001');
    // udh16, data_coding 8, from the intake's rows; the right single quote stays U+2019 (no replacements in a customer's part).
    const udh16 = await seedIntakeCut(rig, clientId, 'Привет ’', cut(8, { scheme: 'udh16', reference: 0x1234, total: 2, sequence: 1 }), '353870000002', 'carrier');
    // SAR TLVs, data_coding 3: Latin-1 octets, no UDH.
    const sar = await seedReadyCut(rig, clientId, 'café ñ', cut(3, { scheme: 'sar', reference: 0xbeef, total: 4, sequence: 3 }), '353870000003');
    // A cut part of the most one part holds beside an 8-bit UDH: 153 septets, sent as one.
    const full = await seedIntakeCut(rig, clientId, 'x'.repeat(153), cut(0, { scheme: 'udh8', reference: 9, total: 2, sequence: 1 }), '353870000004', 'carrier');

    for (const campaignId of [udh8, udh16, sar, full]) {
      const recipients = await until(() => rig.recipients(campaignId), allFinal);
      expect(recipients.map((r) => r.status)).toEqual(['delivered']);
      const parts = await rig.parts(campaignId);
      expect(parts.map((p) => [p.part_number, p.parts_total, p.state])).toEqual([[1, 1, 'delivered']]);
    }

    expect(submitsTo(smsc, '353870000001').map(wire)).toEqual([{ esmClass: 0x40, dataCoding: 0, shortMessage: '050003420302' + '4869200020' + '32', tlvs: {} }]);
    expect(submitsTo(smsc, '353870000002').map(wire)).toEqual([{
      esmClass: 0x40, dataCoding: 8, shortMessage: '06080412340201' + '041f0440043804320435044200202019', tlvs: {},
    }]);
    expect(submitsTo(smsc, '353870000003').map(wire)).toEqual([{
      esmClass: 0, dataCoding: 3, shortMessage: '636166e920f1',
      tlvs: { '020c': 'beef', '020e': '04', '020f': '03' },
    }]);
    expect(submitsTo(smsc, '353870000004').map(wire)).toEqual([{ esmClass: 0x40, dataCoding: 0, shortMessage: '050003090201' + '78'.repeat(153), tlvs: {} }]);

    // Every part's receipt matched, once.
    const matched = (await rig.receipts()).filter((r) => r.match_state === 'matched');
    expect(matched).toHaveLength(4);
  });

  it('splits a message_payload without a header as the SMS core splits any text: GSM-7 in the carrier\'s coding, Latin-1 beyond GSM-7 as UCS-2', async () => {
    const rig = await open();
    const smsc = await receiptingSmsc();
    const carrier = new SmppTransport(smppConfig(smsc, { name: 'carrier', concatenation: 'udh8' }));
    await rig.startEngine({ transports: [carrier] });
    const clientId = await rig.seedClient();

    // data_coding 0, 200 septets: two parts (153 + 47) with smsgate's own 8-bit reference.
    const gsm = await seedReadyCut(rig, clientId, 'a'.repeat(200), cut(0, null), '353870000011');
    // data_coding 3 with 'ô' (Latin-1, not GSM-7): UCS-2, 100 units -> 67 + 33.
    const latin = await seedReadyCut(rig, clientId, 'Côte '.repeat(20), cut(3, null), '353870000012');
    // data_coding 3 whose characters are all GSM-7: GSM-7, one part.
    const latinGsm = await seedReadyCut(rig, clientId, 'café', cut(3, null), '353870000013');
    for (const campaignId of [gsm, latin, latinGsm]) await until(() => rig.recipients(campaignId), allFinal);

    const gsmParts = await rig.parts(gsm);
    expect(gsmParts.map((p) => [p.part_number, p.parts_total, p.state])).toEqual([[1, 2, 'delivered'], [2, 2, 'delivered']]);
    const reference = (gsmParts[0]!.concat_reference & 0xff).toString(16).padStart(2, '0');
    expect(submitsTo(smsc, '353870000011').map(wire).sort((a, b) => a.shortMessage.localeCompare(b.shortMessage))).toEqual([
      { esmClass: 0x40, dataCoding: 0, shortMessage: `050003${reference}0201` + '61'.repeat(153), tlvs: {} },
      { esmClass: 0x40, dataCoding: 0, shortMessage: `050003${reference}0202` + '61'.repeat(47), tlvs: {} },
    ]);

    const latinSubmits = submitsTo(smsc, '353870000012').map(wire);
    expect(latinSubmits.map((s) => s.dataCoding)).toEqual([8, 8]);
    expect(latinSubmits.map((s) => (s.shortMessage.length - 12) / 4).sort((a, b) => b - a)).toEqual([67, 33]);
    expect((await rig.parts(latin)).map((p) => p.parts_total)).toEqual([2, 2]);

    // 'é' is GSM-7 0x05 (GSM 03.38), data_coding 0.
    expect(submitsTo(smsc, '353870000013').map(wire)).toEqual([{ esmClass: 0, dataCoding: 0, shortMessage: '63616605', tlvs: {} }]);
  });

  it('fails a cut part that does not fit one part in its coding permanently, sending nothing, and leaves a normal campaign beside it unchanged', async () => {
    const rig = await open();
    const smsc = await receiptingSmsc();
    const carrier = new SmppTransport(smppConfig(smsc, { name: 'carrier' }));
    await rig.startEngine({ transports: [carrier] });
    const clientId = await rig.seedClient();

    // 154 septets beside an 8-bit UDH (room for 153); 67 UCS-2 units beside a 16-bit one (room for 66);
    // a character outside GSM-7 in data_coding 0.
    const septets = await seedIntakeCut(rig, clientId, 'y'.repeat(154), cut(0, { scheme: 'udh8', reference: 1, total: 2, sequence: 1 }), '353870000021', 'carrier');
    const units = await seedReadyCut(rig, clientId, 'Ж'.repeat(67), cut(8, { scheme: 'udh16', reference: 1, total: 2, sequence: 2 }), '353870000022');
    const notGsm = await seedReadyCut(rig, clientId, 'Ж', cut(0, { scheme: 'udh8', reference: 1, total: 2, sequence: 2 }), '353870000023');
    const normal = await rig.seedCampaign({ clientId, text: 'y'.repeat(200), msisdns: ['353870000024'] });

    for (const [campaignId, status] of [[septets, 'CUSTOMER_PART_TOO_LONG'], [units, 'CUSTOMER_PART_TOO_LONG'], [notGsm, 'CUSTOMER_PART_UNENCODABLE']] as const) {
      const recipients = await until(() => rig.recipients(campaignId), allFinal);
      expect(recipients.map((r) => r.status)).toEqual(['undelivered']);
      expect((await rig.parts(campaignId)).map((p) => [p.parts_total, p.state, p.last_status])).toEqual([[1, 'undelivered', status]]);
    }
    // An HTTP campaign's long text is cut by smsgate as always: two parts, both delivered.
    await until(() => rig.recipients(normal), allFinal);
    expect((await rig.parts(normal)).map((p) => [p.part_number, p.parts_total, p.state])).toEqual([[1, 2, 'delivered'], [2, 2, 'delivered']]);
    expect(smsc.submits.map((s) => s.wire.destination_addr)).toEqual(['353870000024', '353870000024']);
  });

  it('retries a cut part after a temporary refusal with the same octets, and its receipt makes it delivered', async () => {
    const rig = await open();
    let refused = 0;
    // ESME_RTHROTTLED (SMPP 3.4 §5.1.3) for the first submit: a temporary failure.
    const smsc = await receiptingSmsc(() => (refused++ === 0 ? { kind: 'status', commandStatus: 0x58 } : { kind: 'ok' }));
    const carrier = new SmppTransport(smppConfig(smsc, { name: 'carrier' }));
    await rig.startEngine({ transports: [carrier] });
    const campaignId = await seedIntakeCut(rig, await rig.seedClient(), 'Ωmega', cut(0, { scheme: 'udh16', reference: 0xfffe, total: 3, sequence: 3 }), '353870000031', 'carrier');
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(['delivered']);
    const submits = submitsTo(smsc, '353870000031').map(wire);
    // Ω is GSM 03.38 0x15.
    const expected = { esmClass: 0x40, dataCoding: 0, shortMessage: '060804fffe0303' + '156d656761', tlvs: {} };
    expect(submits).toEqual([expected, expected]);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual([['delivered', 2]]);
  });
});

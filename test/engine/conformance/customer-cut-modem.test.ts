/**
 * Engine conformance: a part an SMPP customer cut itself, sent by a GSM modem (a modem emulator
 * on a socat pty), on both backends. A handset reassembles by UDH only, so the part carries the
 * customer's concatenation as a UDH (SAR TLVs become a 16-bit reference UDH with the same values),
 * in GSM-7 or UCS-2 (a Latin-1 part as GSM-7 when it can be, else UCS-2); one that no longer fits
 * beside that header fails permanently. Status reports make the parts delivered as any part's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import { ModemEmulator } from '../../support/modem-emulator/index.js';
import { allFinal, describeEngineConformance, until, type EngineRig } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Concat = { scheme: 'udh8' | 'udh16' | 'sar'; reference: number; total: number; sequence: number };

/** As the SMPP server's intake leaves an accepted submit_sm: its one part queued on the transport. */
async function seedIntakeCut(rig: EngineRig, clientId: number, text: string, dataCoding: 0 | 3 | 8, concat: Concat, msisdn: string): Promise<string> {
  const campaignId = await rig.seedCampaign({ clientId, text, msisdns: [msisdn], ready: false });
  const stored = { dataCoding, concat, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 };
  await rig.sql('UPDATE campaigns SET smpp_submit = ? WHERE id = ?', [JSON.stringify(stored), campaignId]);
  const nowMs = Date.now();
  const [recipient] = await rig.recipients(campaignId);
  await rig.stores.dispatch.insertPart({
    recipientId: recipient!.id, campaignId, partNumber: 1, partsTotal: 1, concatReference: 7, transport: 'modems', state: 'queued',
    lastStatus: null, nextAttemptAt: nowMs, finalAt: null,
  }, nowMs);
  await rig.stores.dispatch.markRecipientDispatched(recipient!.id, nowMs);
  await rig.stores.campaigns.markReady({
    campaignId, totalSent: 1, textSent: text, encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: nowMs, skippedCount: 0, readyAtMs: nowMs,
  });
  rig.engine.wake();
  return campaignId;
}

describeEngineConformance('engine: a customer\'s own cut over a modem', (open) => {
  it('sends the customer\'s UDH (SAR as a 16-bit UDH) in GSM-7 or UCS-2, and fails a part that no longer fits beside it', async () => {
    const rig = await open();
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-cut-modem-'));
    const emulator = new ModemEmulator({ dir, name: 'm0' });
    cleanups.push(async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await emulator.plugIn();
    const modems = new ModemTransport(
      { name: 'modems', type: 'modem', devices: [{ path: emulator.path, messagesPerMinute: 6000 }], retryDelayMs: 10, reopenBackoffMs: [100], healthIntervalMs: 60_000 },
      { registrationPollMs: 50 },
    );
    await rig.startEngine({ transports: [modems] });
    await until(async () => modems.currentState().state, (s) => s === 'bound', 30_000);
    const clientId = await rig.seedClient();

    const udh16 = await seedIntakeCut(rig, clientId, 'Hi @', 0, { scheme: 'udh16', reference: 0x1234, total: 2, sequence: 1 }, '353870000041');
    const sar = await seedIntakeCut(rig, clientId, 'Côte', 3, { scheme: 'sar', reference: 0xbeef, total: 3, sequence: 2 }, '353870000042');
    const udh8 = await seedIntakeCut(rig, clientId, 'Жук', 8, { scheme: 'udh8', reference: 0x42, total: 4, sequence: 4 }, '353870000043');
    // 153 septets: one SMPP part beside SAR TLVs, but over the 152 a 16-bit UDH leaves.
    const tooLong = await seedIntakeCut(rig, clientId, 'z'.repeat(153), 0, { scheme: 'sar', reference: 5, total: 2, sequence: 1 }, '353870000044');

    for (const campaignId of [udh16, sar, udh8]) {
      const recipients = await until(() => rig.recipients(campaignId), allFinal, 30_000);
      expect(recipients.map((r) => r.status)).toEqual(['delivered']);
    }
    await until(() => rig.recipients(tooLong), allFinal);
    expect((await rig.parts(tooLong)).map((p) => [p.state, p.last_status])).toEqual([['undelivered', 'CUSTOMER_PART_TOO_LONG']]);

    const at = (msisdn: string) => emulator.received.filter((r) => r.pdu.destination.digits === msisdn).map((r) => ({
      dcs: r.pdu.dcs, udh: r.pdu.userData.udh, concat: r.pdu.userData.concat, text: r.pdu.userData.text,
    }));
    expect(at('353870000041')).toEqual([{
      dcs: 0x00, udh: [{ iei: 0x08, data: '12340201' }], concat: { reference: 0x1234, referenceBits: 16, total: 2, sequence: 1 }, text: 'Hi @',
    }]);
    // 'ô' is Latin-1 but not GSM-7: UCS-2.
    expect(at('353870000042')).toEqual([{
      dcs: 0x08, udh: [{ iei: 0x08, data: 'BEEF0302' }], concat: { reference: 0xbeef, referenceBits: 16, total: 3, sequence: 2 }, text: 'Côte',
    }]);
    expect(at('353870000043')).toEqual([{
      dcs: 0x08, udh: [{ iei: 0x00, data: '420404' }], concat: { reference: 0x42, referenceBits: 8, total: 4, sequence: 4 }, text: 'Жук',
    }]);
    expect(at('353870000044')).toEqual([]);
  }, 90_000);
});

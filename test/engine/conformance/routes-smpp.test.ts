/**
 * Engine conformance: routes over real SMPP on loopback, on both backends. Two carriers, each a
 * receipting test SMSC that keeps its receipts until acknowledged (as a real one does) and hands
 * out message ids from 1, so the two carriers' ids collide and a receipt matched on the wrong
 * carrier would show. Carrier A sits behind a TCP relay the test stops and starts again: the SMSC
 * goes away mid-campaign and comes back. The appliance case: an SMPP carrier with a USB modem pool
 * (a modem emulator on a socat pty) as its failover, the carrier's SMSC killed mid-campaign.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ModemEmulator } from '../../support/modem-emulator/index.js';
import { ReceiptingSmsc } from '../../support/receipting-smsc.js';
import { TcpRelay } from '../../support/tcp-relay.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { allFinal, describeEngineConformance, msisdns, until } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function carrier(): Promise<ReceiptingSmsc> {
  const smsc = await ReceiptingSmsc.start();
  cleanups.push(() => smsc.stop());
  return smsc;
}

/** Submits the carrier's SMSC got, duplicates included. */
const submitted = (smsc: ReceiptingSmsc): number => [...smsc.submitsByDestination.values()].reduce((sum, n) => sum + n, 0);

const WINDOW = 5;

describeEngineConformance('engine routes over SMPP', (open) => {
  it('fails over when the first carrier\'s SMSC stops mid-campaign and moves back when it returns: none lost, receipts matched on their own carrier', async () => {
    const rig = await open();
    const smscA = await carrier();
    const smscB = await carrier();
    const relay = await TcpRelay.start(smscA.address.host, smscA.address.port);
    cleanups.push(() => relay.close());
    const carrierA = new SmppTransport(smppConfig(smscA.smsc, { name: 'carrierA', port: relay.port, window: WINDOW, maxPerSecond: 100 }));
    const carrierB = new SmppTransport(smppConfig(smscB.smsc, { name: 'carrierB', window: WINDOW, maxPerSecond: 100 }));
    await rig.startEngine({ transports: [carrierA, carrierB], routes: [{ prefix: '', transports: ['carrierA', 'carrierB'], strategy: 'failover', failoverAfterMs: 500 }] });
    const recipientsCount = 300;
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(recipientsCount) });

    await until(async () => submitted(smscA), (n) => n >= 50, 30_000);
    await relay.stopListening();
    const atStop = submitted(smscA);
    await until(async () => submitted(smscB), (n) => n >= 50, 30_000);
    await relay.listenAgain();
    const recipients = await until(() => rig.recipients(campaignId), (rows) => allFinal(rows), 60_000);

    // None lost: every recipient delivered, each part on one carrier.
    expect(recipients.map((r) => r.status)).toEqual(Array(recipientsCount).fill('delivered'));
    const parts = await rig.parts(campaignId);
    const onA = parts.filter((p) => p.transport === 'carrierA');
    const onB = parts.filter((p) => p.transport === 'carrierB');
    expect(onA.length + onB.length).toBe(recipientsCount);
    // Moved back: carrier A took parts again once it returned.
    expect(submitted(smscA)).toBeGreaterThan(atStop);
    // Each part went out on the carrier its row names...
    const byId = new Map(recipients.map((r) => [r.id, r.msisdn]));
    for (const part of onA) expect(smscA.submitsByDestination.has(byId.get(part.recipient_id)!)).toBe(true);
    for (const part of onB) expect(smscB.submitsByDestination.has(byId.get(part.recipient_id)!)).toBe(true);
    // ...and twice at most for the submits in flight on A when its link went (their responses were lost).
    expect(submitted(smscA) + submitted(smscB) - recipientsCount).toBeLessThanOrEqual(WINDOW);
    // Every part's receipt is matched on the carrier it was submitted on, though both carriers used ids 1, 2, 3...
    const matched = (await rig.receipts()).filter((r) => r.match_state === 'matched');
    const partsById = new Map(parts.map((p) => [p.id, p]));
    expect(new Set(matched.map((r) => r.part_id)).size).toBe(recipientsCount);
    for (const receipt of matched) expect(receipt.transport).toBe(partsById.get(receipt.part_id!)?.transport);
  });

  it('moves the rest of a campaign to the modem pool when the carrier\'s SMSC is killed mid-campaign: nothing lost', async () => {
    const rig = await open();
    const smsc = await carrier();
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-route-modem-'));
    const emulator = new ModemEmulator({ dir, name: 'm0' });
    cleanups.push(async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await emulator.plugIn();
    const carrierT = new SmppTransport(smppConfig(smsc.smsc, { name: 'carrier', window: WINDOW, maxPerSecond: 20 }));
    const modems = new ModemTransport(
      { name: 'modems', type: 'modem', devices: [{ path: emulator.path, messagesPerMinute: 6000 }], retryDelayMs: 10, reopenBackoffMs: [100], healthIntervalMs: 60_000 },
      { registrationPollMs: 50 },
    );
    await rig.startEngine({ transports: [carrierT, modems], routes: [{ prefix: '', transports: ['carrier', 'modems'], strategy: 'failover', failoverAfterMs: 500 }] });
    await until(async () => [carrierT.currentState().state, modems.currentState().state], (s) => s.every((x) => x === 'bound'), 30_000);
    const recipientsCount = 40;
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(recipientsCount) });
    await until(async () => submitted(smsc), (n) => n >= 5, 30_000);
    await smsc.stop();
    const parts = await until(() => rig.parts(campaignId), (ps) => ps.length === recipientsCount && ps.every((p) => p.state === 'delivered' || (p.state === 'submitted' && p.transport === 'carrier')), 60_000);
    // Nothing lost: every part is delivered, or accepted by the carrier before it died (its receipt is the carrier's to send).
    const onModem = parts.filter((p) => p.transport === 'modems');
    const onCarrier = parts.filter((p) => p.transport === 'carrier');
    expect(onModem.length).toBeGreaterThan(0);
    expect(onModem.length + onCarrier.length).toBe(recipientsCount);
    expect(onModem.every((p) => p.state === 'delivered')).toBe(true);
    const msisdnOf = new Map((await rig.recipients(campaignId)).map((r) => [r.id, r.msisdn]));
    const atModem = new Set(emulator.received.map((r) => r.pdu.destination.digits));
    for (const part of onModem) expect(atModem.has(msisdnOf.get(part.recipient_id)!)).toBe(true);
    for (const part of onCarrier) expect(smsc.submitsByDestination.has(msisdnOf.get(part.recipient_id)!)).toBe(true);
    // Sent twice at most for the submits in flight on the carrier when it died.
    expect(emulator.received.length + submitted(smsc) - recipientsCount).toBeLessThanOrEqual(WINDOW);
    // Every delivered modem part's receipt was matched on the modem pool.
    const matched = (await rig.receipts()).filter((r) => r.match_state === 'matched');
    const partsById = new Map(parts.map((p) => [p.id, p]));
    for (const receipt of matched) expect(receipt.transport).toBe(partsById.get(receipt.part_id!)?.transport);
    expect(matched.filter((r) => r.transport === 'modems').length).toBeGreaterThanOrEqual(onModem.length);
  }, 90_000);

  it('splits a weighted route 70/30, counted at both SMSCs', async () => {
    const rig = await open();
    const smscA = await carrier();
    const smscB = await carrier();
    const carrierA = new SmppTransport(smppConfig(smscA.smsc, { name: 'carrierA', window: 20 }));
    const carrierB = new SmppTransport(smppConfig(smscB.smsc, { name: 'carrierB', window: 20 }));
    await rig.startEngine({ transports: [carrierA, carrierB], routes: [{ prefix: '', transports: [{ name: 'carrierA', weight: 70 }, { name: 'carrierB', weight: 30 }], strategy: 'weighted' }] });
    // Both bound before the campaign: the split is over the carriers up.
    await until(async () => [carrierA.currentState().state, carrierB.currentState().state], (s) => s.every((x) => x === 'bound'));
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(1_000) });
    await until(() => rig.recipients(campaignId), allFinal, 60_000);
    expect(submitted(smscA) + submitted(smscB)).toBe(1_000);
    expect(Math.abs(submitted(smscA) / 10 - 70)).toBeLessThanOrEqual(2);
    expect(Math.abs(submitted(smscB) / 10 - 30)).toBeLessThanOrEqual(2);
  });
});

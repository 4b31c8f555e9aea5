/**
 * Engine conformance: routes over real SMPP on loopback, on both backends. Two carriers, each a
 * receipting test SMSC that keeps its receipts until acknowledged (as a real one does) and hands
 * out message ids from 1, so the two carriers' ids collide and a receipt matched on the wrong
 * carrier would show. Carrier A sits behind a TCP relay the test stops and starts again: the SMSC
 * goes away mid-campaign and comes back.
 */
import { afterEach, expect, it } from 'vitest';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
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

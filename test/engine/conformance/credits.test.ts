/**
 * Engine conformance: charges and releases on both backends (docs/behaviour/credits.md "Charges
 * and releases"). A priced part is charged (its reservation consumed) when the carrier accepts it
 * and released when it ends without being accepted: rejected permanently, its retries spent, or
 * no route for its recipient. A part accepted and later undelivered by its receipt stays charged;
 * a part sent again after a kill is charged once. The client's balance and reserved always equal
 * the ledger's sums.
 */
import { afterEach, expect, it } from 'vitest';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ManualClock } from '../../support/manual-clock.js';
import { ReceiptingSmsc } from '../../support/receipting-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { allFinal, describeEngineConformance, msisdns, until, type EngineRig } from './engine-backends.js';

/** 200 GSM-7 characters: two concatenated parts of 153. */
const TWO_PART_TEXT = 'A'.repeat(200);
const TOP_UP = 1_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function simulator(overrides: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [], ...overrides }, { recordAccepted: true });
}

const allPartsFinal = (parts: readonly { state: string }[]): boolean => parts.length > 0 && parts.every((p) => p.state === 'delivered' || p.state === 'undelivered');

/** A client with TOP_UP credits. */
async function fundedClient(rig: EngineRig): Promise<number> {
  const clientId = await rig.seedClient();
  await rig.applyCredits([{ clientId, kind: 'top-up', credits: TOP_UP, campaignId: null, note: 'test' }]);
  return clientId;
}

interface LedgerSums {
  /** The ledger's sum of each kind for the campaign. */
  byKind: Record<string, number>;
  /** Balance and reserved by the ledger's rule, over all the client's rows. */
  ledger: { balance: number; reserved: number };
  /** What client_credits holds. */
  account: { balance: number; reserved: number };
}

async function ledgerSums(rig: EngineRig, clientId: number, campaignId: string): Promise<LedgerSums> {
  const rows = await rig.sql<{ kind: string; credits: number; campaign_id: string | null }>(
    'SELECT kind, credits, campaign_id FROM credit_ledger WHERE client_id = ? ORDER BY id', [clientId]);
  const byKind: Record<string, number> = {};
  const ledger = { balance: 0, reserved: 0 };
  for (const r of rows) {
    const credits = Number(r.credits);
    if (r.campaign_id === campaignId) byKind[r.kind] = (byKind[r.kind] ?? 0) + credits;
    if (r.kind === 'reserve' || r.kind === 'release') ledger.reserved += credits;
    else ledger.balance += credits;
  }
  const [account] = await rig.sql<{ balance: number; reserved: number }>('SELECT balance, reserved FROM client_credits WHERE client_id = ?', [clientId]);
  return { byKind, ledger, account: { balance: Number(account?.balance), reserved: Number(account?.reserved) } };
}

describeEngineConformance('engine charges and releases', (open) => {
  it('charges every part the carrier accepted once, at its price, consuming the campaign\'s reservation', async () => {
    const rig = await open();
    const sim = simulator();
    await rig.startEngine({ transports: [sim] });
    const clientId = await fundedClient(rig);
    // 3 recipients x 2 parts x 2 credits: 12 reserved.
    const campaignId = await rig.seedCampaign({ clientId, text: TWO_PART_TEXT, msisdns: ['353871000001', '353871000002', '353871000003'], creditsPerPart: 2 });
    await until(() => rig.recipients(campaignId), allFinal);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.credits])).toEqual(Array(6).fill(['delivered', 2]));
    expect(sim.accepted).toHaveLength(6);
    const sums = await until(() => ledgerSums(rig, clientId, campaignId), (s) => s.account.reserved === 0);
    expect(sums.byKind).toEqual({ reserve: 12, release: -12, charge: -12 });
    expect(sums.account).toEqual({ balance: TOP_UP - 12, reserved: 0 });
    expect(sums.ledger).toEqual(sums.account);
  });

  it('releases parts rejected permanently or whose retries are spent; a part accepted and undelivered by its receipt stays charged', async () => {
    const rig = await open();
    const sim = simulator({
      outcomes: [
        { suffix: '8', status: 'REJECTD', kind: 'reject' },
        { suffix: '7', status: 'THROTTLED', kind: 'temporary' },
        { suffix: '9', status: 'UNDELIV' },
      ],
    });
    await rig.startEngine({ transports: [sim], engine: { maxAttempts: 2 } });
    const clientId = await fundedClient(rig);
    // 4 recipients x 1 part x 3 credits: 12 reserved.
    const campaignId = await rig.seedCampaign({ clientId, msisdns: ['353871000001', '353871000008', '353871000007', '353871000009'], creditsPerPart: 3 });
    await until(() => rig.parts(campaignId), allPartsFinal);
    const recipients = await rig.recipients(campaignId);
    expect(recipients.map((r) => [r.msisdn, r.status, r.last_status])).toEqual([
      ['353871000001', 'delivered', 'DELIVRD'],
      ['353871000008', 'undelivered', 'REJECTD'],
      ['353871000007', 'undelivered', 'THROTTLED'],
      ['353871000009', 'undelivered', 'UNDELIV'],
    ]);
    expect((await rig.parts(campaignId)).map((p) => p.attempts)).toEqual([1, 1, 2, 1]);
    // Accepted: ...1 and ...9 (6 charged); never accepted: ...8 and ...7 (6 released).
    expect(sim.accepted.map((a) => a.destination).sort()).toEqual(['353871000001', '353871000009']);
    const sums = await until(() => ledgerSums(rig, clientId, campaignId), (s) => s.account.reserved === 0);
    expect(sums.byKind).toEqual({ reserve: 12, release: -12, charge: -6 });
    expect(sums.account).toEqual({ balance: TOP_UP - 6, reserved: 0 });
    expect(sums.ledger).toEqual(sums.account);
  });

  it('releases what a recipient no route matches reserved when it is finished at once', async () => {
    const rig = await open();
    const sim = simulator();
    await rig.startEngine({ transports: [sim], routes: [{ prefix: '35387', transport: 'sim' }] });
    const clientId = await fundedClient(rig);
    // 2 recipients x 2 parts x 2 credits: 8 reserved; the UK number has no route.
    const campaignId = await rig.seedCampaign({ clientId, text: TWO_PART_TEXT, msisdns: ['353871000001', '447700900001'], creditsPerPart: 2 });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.last_status])).toEqual([['delivered', 'DELIVRD'], ['undelivered', 'NO_ROUTE']]);
    const sums = await until(() => ledgerSums(rig, clientId, campaignId), (s) => s.account.reserved === 0);
    expect(sums.byKind).toEqual({ reserve: 8, release: -8, charge: -4 });
    expect(sums.account).toEqual({ balance: TOP_UP - 4, reserved: 0 });
    expect(sums.ledger).toEqual(sums.account);
  });

  it('over real SMPP, charges exactly the parts the SMSC accepted (counted at the SMSC) and releases the rest', async () => {
    const rig = await open();
    // Numbers ending in 8 refused for good (ESME_RINVDSTADR), in 7 refused for now every time
    // (ESME_RSYSERR, temporary: retried until the attempts are spent), in 9 accepted then UNDELIV.
    const smsc = await ReceiptingSmsc.start({
      submitStatusFor: (destination) => (destination.endsWith('8') ? 0x0b : destination.endsWith('7') ? 0x08 : 0),
      statusFor: (destination) => (destination.endsWith('9') ? 'UNDELIV' : 'DELIVRD'),
    });
    cleanups.push(() => smsc.stop());
    await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc.smsc))], engine: { maxAttempts: 2 } });
    const clientId = await fundedClient(rig);
    const numbers = msisdns(30);
    // 30 recipients x 2 parts x 3 credits: 180 reserved.
    const campaignId = await rig.seedCampaign({ clientId, text: TWO_PART_TEXT, msisdns: numbers, creditsPerPart: 3 });
    // A recipient is final with its first failed part; its other part may still be retried.
    await until(() => rig.parts(campaignId), allPartsFinal, 30_000);
    expect((await rig.recipients(campaignId)).filter((r) => r.status === 'delivered')).toHaveLength(21);
    const acceptedParts = [...smsc.acceptedByDestination.values()].reduce((n, k) => n + k, 0);
    // 3 numbers end in 8 and 3 in 7: 24 recipients' 2 parts each accepted, once each.
    expect(acceptedParts).toBe(48);
    expect(smsc.acceptedByDestination.size).toBe(24);
    const sums = await until(() => ledgerSums(rig, clientId, campaignId), (s) => s.account.reserved === 0);
    expect(sums.byKind).toEqual({ reserve: 180, release: -180, charge: -3 * acceptedParts });
    expect(sums.account).toEqual({ balance: TOP_UP - 3 * acceptedParts, reserved: 0 });
    expect(sums.ledger).toEqual(sums.account);
  });

  it('moves no credits for an unpriced campaign (an unlimited client)', async () => {
    const rig = await open();
    await rig.startEngine({ transports: [simulator({ outcomes: [{ suffix: '8', status: 'REJECTD', kind: 'reject' }] })] });
    const clientId = await rig.seedClient();
    const campaignId = await rig.seedCampaign({ clientId, msisdns: ['353871000001', '353871000008'] });
    await until(() => rig.recipients(campaignId), allFinal);
    expect(await rig.sql('SELECT * FROM credit_ledger', [])).toEqual([]);
    expect(await rig.sql('SELECT * FROM client_credits', [])).toEqual([]);
  });

  it('after a kill, a part left submitting is sent again and charged once', async () => {
    const rig = await open();
    // The engine that is killed: its loops sleep on a clock that never moves again and its
    // transport never answers, so its parts stay 'submitting', as if the process were gone.
    const killed = new ScriptedTransport('carrier');
    await rig.startEngine({ transports: [killed], clock: new ManualClock(0) });
    const clientId = await fundedClient(rig);
    const campaignId = await rig.seedCampaign({ clientId, text: TWO_PART_TEXT, msisdns: ['353871000001'], creditsPerPart: 5, wake: false });
    rig.engine.wake();
    await until(async () => killed.held.length, (n) => n === 1);
    expect((await rig.parts(campaignId)).map((p) => p.state)).toEqual(['submitting', 'submitting']);
    const before = await ledgerSums(rig, clientId, campaignId);
    expect(before.byKind).toEqual({ reserve: 10 });

    const sim = simulator({ name: 'carrier' });
    await rig.startEngine({ transports: [sim] });
    await until(() => rig.recipients(campaignId), allFinal);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual([['delivered', 1], ['delivered', 1]]);
    // Sent twice (once to the killed engine's carrier, once now), accepted once, charged once.
    expect(sim.accepted).toHaveLength(2);
    const sums = await until(() => ledgerSums(rig, clientId, campaignId), (s) => s.account.reserved === 0);
    expect(sums.byKind).toEqual({ reserve: 10, release: -10, charge: -10 });
    expect(sums.account).toEqual({ balance: TOP_UP - 10, reserved: 0 });
    expect(sums.ledger).toEqual(sums.account);
  });
});

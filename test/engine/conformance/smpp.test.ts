/**
 * Engine conformance end to end over real SMPP on loopback (TestSmsc), on both backends: single-
 * and multi-part messages of two campaigns sent once each, every receipt applied, one webhook row
 * per recipient, the engine's counters agreeing with the rows.
 */
import { afterEach, expect, it } from 'vitest';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { allFinal, describeEngineConformance, msisdns, until, webhookStatuses } from './engine-backends.js';

/** 200 GSM-7 characters: two concatenated parts of 153. */
const TWO_PART_TEXT = 'A'.repeat(200);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeEngineConformance('engine over SMPP', (open) => {
  it('sends single- and multi-part messages and applies every receipt: recipients delivered, one webhook row each', async () => {
    const rig = await open();
    const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' } });
    cleanups.push(() => smsc.stop());
    const engine = await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))] });
    const clientId = await rig.seedClient();
    const short = await rig.seedCampaign({ clientId, msisdns: msisdns(3) });
    const long = await rig.seedCampaign({ clientId, text: TWO_PART_TEXT, msisdns: msisdns(2, '35386') });

    const shortRecipients = await until(() => rig.recipients(short), allFinal);
    const longRecipients = await until(() => rig.recipients(long), allFinal);
    expect([...shortRecipients, ...longRecipients].map((r) => [r.status, r.last_status])).toEqual(Array(5).fill(['delivered', 'DELIVRD']));
    const parts = [...await rig.parts(short), ...await rig.parts(long)];
    expect(parts.map((p) => [p.part_number, p.parts_total, p.state, p.attempts])).toEqual([
      ...Array(3).fill([1, 1, 'delivered', 1]),
      [1, 2, 'delivered', 1], [2, 2, 'delivered', 1],
      [1, 2, 'delivered', 1], [2, 2, 'delivered', 1],
    ]);
    if (rig.hasNodes) expect(parts.map((p) => p.claimed_by)).toEqual(Array(7).fill(null));
    expect(smsc.submits).toHaveLength(7);
    expect((await rig.receipts()).map((r) => r.match_state)).toEqual(Array(7).fill('matched'));
    expect([...webhookStatuses(await rig.outbox()).values()]).toEqual(Array(5).fill(['DELIVRD']));
    expect(engine.stats()).toMatchObject({ recipientsDispatched: 5, submits: 5, outcomes: { accepted: 7, retried: 0, failed: 0 }, fencedWrites: 0, failedCommits: 0 });
    // Matched on arrival, or kept unmatched a moment and taken by the submit write of their part.
    expect(engine.stats().receiptsMatched + engine.stats().receiptsParked).toBe(7);
  });
});

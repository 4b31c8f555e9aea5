/**
 * Two real `smsgate serve` nodes on one throwaway PostgreSQL and one carrier SMSC that allows 2
 * binds per system_id and sends receipts on the other bind: a campaign accepted by one node is sent
 * through both nodes' binds (one each: ceil(2 / 2)), never more than 2 binds open, every recipient
 * submitted once and webhooked once, whichever node's bind the receipt arrived on. A node that stops
 * gracefully leaves at once: the other takes both binds without waiting for a lease or a takeover.
 */
import { describe, expect, it } from 'vitest';
import { ClusterSmsc } from '../support/cluster-smsc.js';
import { getSummary, postCampaign, until } from '../e2e/e2e-setup.js';
import { usePgServePeers } from '../e2e/pg-serve-setup.js';

const RECIPIENTS = 2_000;
const CARRIER_BINDS = 2;
const SECRET = 'two-nodes-secret';

const peers = usePgServePeers('two-nodes', {
  webhookSecret: SECRET,
  startSmsc: () => ClusterSmsc.start({ maxBinds: CARRIER_BINDS }),
  transport: { window: 10, maxPerSecond: 2_000, binds: CARRIER_BINDS },
});

describe('two serve nodes on one PostgreSQL', () => {
  it('share the carrier binds and a campaign: each recipient submitted once and webhooked', async () => {
    const { smsc, receiver, token } = peers();
    const a = await peers().spawn();
    const b = await peers().spawn();
    await until(() => smsc.boundCount, (n) => n === CARRIER_BINDS, 30_000, 'both binds open');
    const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35386${String(i).padStart(7, '0')}`);
    const { status, id } = await postCampaign(a.baseUrl, token, { text: 'Two nodes', from: 'Shop', recipientInfo: msisdns.map((msisdn) => ({ msisdn })) });
    expect(status).toBe(202);
    // Summaries from the other node.
    const summary = await until(() => getSummary(b.baseUrl, token, id), (s) => s !== undefined && s.pending === 0, 240_000, 'every recipient final');
    expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS, undelivered: 0, pending: 0 });
    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    expect(smsc.duplicates()).toEqual({ destinations: 0, extraSubmits: 0 });
    expect(smsc.maxConcurrentBinds).toBeLessThanOrEqual(CARRIER_BINDS);
    expect(smsc.bindsRefused).toBe(0);
    expect(smsc.receiptsOnOtherBind).toBeGreaterThan(0);
    await receiver.waitUntil(() => new Set(receiver.bodies().map((body) => (body as { To: string }).To)).size >= RECIPIENTS, 120_000, 'one webhook per recipient');
    expect(receiver.signatureFailures).toBe(0);

    // A leaves gracefully: its row goes at once (no lease to wait out) and B takes both binds.
    expect(await a.stop()).toBe(0);
    // B's beats saw the live nodes change twice: 1 -> 2 when it joined, 2 -> 1 when A left.
    await until(() => b.logLines.filter((line) => line.includes('live nodes changed')).length >= 2 && smsc.boundCount === CARRIER_BINDS,
      (done) => done, 30_000, 'B sees A gone and holds both binds');
    expect(b.logLines.filter((line) => line.includes('live nodes changed')).map((line) => (JSON.parse(line) as { liveNodes: number }).liveNodes)).toEqual([2, 1]);
    expect(smsc.maxConcurrentBinds).toBeLessThanOrEqual(CARRIER_BINDS);
    expect(smsc.bindsRefused).toBe(0);
    expect(b.logLines.some((line) => line.includes('took over from nodes'))).toBe(false);
    expect(await b.stop()).toBe(0);
  }, 600_000);
});

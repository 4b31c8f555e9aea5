/**
 * The multi-node end to end: three real `smsgate serve` nodes on one throwaway
 * PostgreSQL, a 20,000-recipient campaign POSTed to one of them, SMPP to a carrier that allows 2
 * binds for the system_id (so one node holds none: the cluster's limit, not each node's) and sends
 * each receipt on another bind than the submit's; `kill -9` of a node holding a bind at about 30%
 * submitted. Then, with the numbers: lost 0 (every recipient final, every recipient's
 * webhook delivered to a real receiver), duplicate submits at most binds x window, never more binds
 * than the limit at any moment, never more submits in a second than the cap plus one window, every
 * receipt matched. The survivors take the dead node's bind slot and work over.
 *
 * The cap (200/s over 2 binds) keeps the run near 110 s on 2 shared cores, and low enough that the
 * nodes reach it even when the machine is loaded, so the rate bound is exercised rather than met by
 * slowness. A window of 40 gives binds x window = 80, more than the cluster's token buckets hold
 * (a tenth of a second of the cap: 20), so a correct cluster meets "cap plus one window" whatever
 * the burst.
 */
import { describe, expect, it } from 'vitest';
import { bindHolders, campaignBody, expectNothingLost, finalSummary, msisdnsFor, useClusterPeers } from './cluster-setup.js';
import { postCampaign, until } from './e2e-setup.js';

const NODES = 3;
const RECIPIENTS = 20_000;
const BOUNDS = { binds: 2, window: 40, maxPerSecond: 200 };

const peers = useClusterPeers('cluster-kill', { maxBinds: BOUNDS.binds });

describe('three nodes on one PostgreSQL, kill -9 of a bind-holding node at 30%', () => {
  it('loses nothing, keeps duplicates within binds x window, binds within the limit, the rate within the cap plus one window, and matches every receipt', async () => {
    const { database, carrier, receiver: webhooks } = peers();
    // The carrier's 2 binds, shared fairly: ceil(2 / 3) = 1 each, so two nodes hold one, one none.
    const cluster = await peers().startNodes(NODES, BOUNDS);
    const { nodes } = cluster;

    const msisdns = msisdnsFor(RECIPIENTS);
    const entry = cluster.node(0);
    const { status, id } = await postCampaign(entry.baseUrl, cluster.account.token, campaignBody(msisdns));
    expect(status).toBe(202);

    await until(() => carrier.submitCount, (n) => n >= RECIPIENTS * 0.3, 120_000, '30% of the submits');
    const victim = bindHolders(nodes, carrier.address.port)[0];
    expect(victim).toBeDefined();
    victim?.kill('SIGKILL');
    expect((await victim?.waitForExit())?.signal).toBe('SIGKILL');
    expect(carrier.submitCount).toBeLessThan(RECIPIENTS);

    // A survivor takes the dead node's bind slot: the carrier sees both binds again.
    await until(() => bindHolders(nodes, carrier.address.port).length, (n) => n === BOUNDS.binds, 30_000, 'the dead node\'s bind taken over');

    const summary = await finalSummary(nodes, cluster.account.token, id, 150_000);
    const figures = await expectNothingLost({ database, smsc: carrier, receiver: webhooks, msisdns, summary, bounds: BOUNDS, webhookTimeoutMs: 60_000 });
    console.log(`cluster kill: node ${victim?.index} killed at ${RECIPIENTS * 0.3}+ submits; ${JSON.stringify(figures)}`);

    // The survivors stop cleanly.
    expect(await cluster.stopAll()).toEqual(nodes.map((node) => (node === victim ? null : 0)));
  }, 300_000);
});

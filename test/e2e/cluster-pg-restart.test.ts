/**
 * PostgreSQL restarted under a running campaign: two real `smsgate serve` nodes on one throwaway
 * PostgreSQL, a carrier allowing 2 binds (one a node) with a window of 10, so the cluster may have
 * binds x window = 20 submits on the wire. Mid-campaign the server is shut down (fast shutdown:
 * every session ended, as a restart or a failover does) and kept down longer than the nodes' lease
 * (5 s), so when it is back the nodes find their leases run out (one reaps the other), and every part a node
 * had sent without its outcome being recorded is requeued and sent again. That is what a node's
 * engine window bounds: `window` x the bind slots the node holds (one here), not x the cluster's
 * `binds` (which let each node leave 20 unrecorded, 40 for the cluster).
 * Asserted: nothing lost (every recipient final and webhooked), duplicate submits at most
 * binds x window, never more binds than the carrier allows, the rate within the cap plus one window.
 */
import { describe, expect, it } from 'vitest';
import { campaignBody, expectNothingLost, finalSummary, msisdnsFor, useClusterPeers } from './cluster-setup.js';
import { postCampaign, until } from './e2e-setup.js';

const NODES = 2;
const RECIPIENTS = 4_000;
const BOUNDS = { binds: 2, window: 10, maxPerSecond: 200 };
/** Longer than the 5 s lease: the leases run out while the database is down. */
const DOWN_MS = 8_000;

const peers = useClusterPeers('cluster-pg-restart', { maxBinds: BOUNDS.binds });

describe('PostgreSQL restarted mid-campaign under two nodes', () => {
  it('loses nothing and re-sends at most binds x window', async () => {
    const { database, postgres, carrier, receiver } = peers();
    const cluster = await peers().startNodes(NODES, BOUNDS);
    const { nodes } = cluster;

    const msisdns = msisdnsFor(RECIPIENTS);
    const { status, id } = await postCampaign(cluster.node(0).baseUrl, cluster.account.token, campaignBody(msisdns));
    expect(status).toBe(202);
    await until(() => carrier.submitCount, (n) => n >= RECIPIENTS * 0.25, 120_000, '25% of the submits');

    const submitsAtRestart = carrier.submitCount;
    await postgres.restart(DOWN_MS);
    // The leases ran out while the database was down: the node whose first beat comes back first
    // reaps the other, which finds itself fenced out and rejoins (the first keeps its row, so not
    // every node is fenced: which one is a race).
    await until(
      () => nodes.map((node) => node.logLines.some((line) => line.includes('fenced out of the cluster'))),
      (fenced) => fenced.some(Boolean),
      60_000,
      'a node fenced and rejoined',
    );

    const summary = await finalSummary(nodes, cluster.account.token, id, 180_000);
    const figures = await expectNothingLost({ database, smsc: carrier, receiver, msisdns, summary, bounds: BOUNDS, webhookTimeoutMs: 60_000 });
    console.log(`cluster pg restart: restarted at ${submitsAtRestart} submits, down ${DOWN_MS} ms; ${JSON.stringify(figures)}`);
    expect(await cluster.stopAll()).toEqual(nodes.map(() => 0));
  }, 300_000);
});

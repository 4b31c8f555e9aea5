/**
 * PostgreSQL frozen under a running campaign: the same two nodes, carrier and bounds as the restart
 * test, but the server is stopped with SIGSTOP for 20 s (a stalled disk, a paused VM): no session
 * is ended, nothing answers. When it thaws every node's lease has run out on the database's clock,
 * so every node is fenced and rejoins, and what each had sent without its outcome recorded is
 * sent again: within binds x window for the cluster. Before outcomes were fenced on the id a part
 * was claimed under, a node's stale copy of a part claimed before the thaw requeued the claim it
 * made after rejoining, and that part went out twice more (56 to 81 extra submits against 20).
 * Asserted: nothing lost (every recipient final and webhooked), duplicate submits at most
 * binds x window, never more binds than the carrier allows, the rate within the cap plus one window.
 */
import { describe, expect, it } from 'vitest';
import { campaignBody, expectNothingLost, finalSummary, msisdnsFor, useClusterPeers } from './cluster-setup.js';
import { postCampaign, until } from './e2e-setup.js';

const NODES = 2;
const RECIPIENTS = 4_000;
const BOUNDS = { binds: 2, window: 10, maxPerSecond: 200 };
/** Far longer than the 5 s lease: every node is fenced when the database thaws. */
const FROZEN_MS = 20_000;

const peers = useClusterPeers('cluster-pg-freeze', { maxBinds: BOUNDS.binds });

describe('PostgreSQL frozen mid-campaign under two nodes', () => {
  it('loses nothing and re-sends at most binds x window', async () => {
    const { database, postgres, carrier, receiver } = peers();
    const cluster = await peers().startNodes(NODES, BOUNDS);
    const { nodes } = cluster;

    const msisdns = msisdnsFor(RECIPIENTS);
    const { status, id } = await postCampaign(cluster.node(0).baseUrl, cluster.account.token, campaignBody(msisdns));
    expect(status).toBe(202);
    await until(() => carrier.submitCount, (n) => n >= RECIPIENTS * 0.25, 120_000, '25% of the submits');

    const submitsAtFreeze = carrier.submitCount;
    await postgres.freeze(FROZEN_MS);
    // The leases ran out while the database was frozen: the node whose first beat comes back first
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
    console.log(`cluster pg freeze: frozen at ${submitsAtFreeze} submits for ${FROZEN_MS} ms; ${JSON.stringify(figures)}`);
    expect(await cluster.stopAll()).toEqual(nodes.map(() => 0));
  }, 300_000);
});

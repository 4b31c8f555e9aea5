/**
 * PostgreSQL frozen under a running campaign (SIGSTOP to every server process for 20 s: a hung
 * storage, a paused VM; its sessions stay open and simply stop answering): two real `smsgate serve`
 * nodes on one throwaway PostgreSQL, a carrier allowing 2 binds (one a node) with a window of 10.
 * The nodes keep sending until their engine windows are full of submits whose outcomes cannot be
 * written, or their leases may have lapsed (a node submits only within 4 s of its last beat); when
 * the server wakes every node is fenced and what it left unrecorded is sent again. A node's window
 * is `window` x the slots it holds, so the cluster re-sends at most binds x window (it re-sent 30,
 * and up to 40, when every node's window was window x the cluster's binds).
 * Asserted: nothing lost, duplicate submits at most binds x window, binds within the limit, the rate
 * within the cap plus one window.
 */
import { describe, expect, it } from 'vitest';
import { campaignBody, expectNothingLost, finalSummary, msisdnsFor, useClusterPeers } from './cluster-setup.js';
import { postCampaign, until } from './e2e-setup.js';

const NODES = 2;
const RECIPIENTS = 4_000;
const BOUNDS = { binds: 2, window: 10, maxPerSecond: 200 };
/** Far longer than the 5 s lease: every node is fenced when the database wakes. */
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
    const frozenAtMs = Date.now();
    postgres.freeze(true);
    try {
      // The freeze is the scenario: the nodes must cope on their own for this long.
      await new Promise((resolve) => setTimeout(resolve, FROZEN_MS));
    } finally {
      postgres.freeze(false);
    }
    const thawedAtMs = Date.now();
    // Both nodes come back: fenced out (their leases ran out while the database was frozen) and rejoined.
    await until(
      () => nodes.map((node) => node.logLines.some((line) => line.includes('fenced out of the cluster'))),
      (fenced) => fenced.every(Boolean),
      60_000,
      'every node fenced and rejoined',
    );

    const summary = await finalSummary(nodes, cluster.account.token, id, 180_000);
    // For a failure's message: what each node warned about, distinct messages with their counts.
    for (const node of nodes) {
      const said = new Map<string, number>();
      for (const line of node.logLines) {
        try {
          const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
          if ((entry.level ?? 0) < 40) continue;
          const text = `${entry.msg ?? ''}${entry.err?.message === undefined ? '' : ` (${entry.err.message.slice(0, 80)})`}`.slice(0, 160);
          said.set(text, (said.get(text) ?? 0) + 1);
        } catch {
          // Not a JSON line.
        }
      }
      console.log(`node ${node.index} warned: ${JSON.stringify([...said])}`);
    }
    // For a failure's message: when each part sent again was sent, relative to the freeze (s), by which client port.
    const sentAt = new Map<string, string[]>();
    for (const submit of carrier.submitLog) {
      const at = submit.atMs < frozenAtMs ? `-${((frozenAtMs - submit.atMs) / 1000).toFixed(1)}` : submit.atMs < thawedAtMs ? `+${((submit.atMs - frozenAtMs) / 1000).toFixed(1)}` : `thaw+${((submit.atMs - thawedAtMs) / 1000).toFixed(1)}`;
      sentAt.set(submit.destination, [...(sentAt.get(submit.destination) ?? []), `${at}@${submit.remotePort}`]);
    }
    console.log(`sent again: ${JSON.stringify([...sentAt.values()].filter((times) => times.length > 1))}`);
    const figures = await expectNothingLost({ database, smsc: carrier, receiver, msisdns, summary, bounds: BOUNDS, webhookTimeoutMs: 60_000 });
    console.log(`cluster pg freeze: frozen at ${submitsAtFreeze} submits for ${FROZEN_MS} ms; ${JSON.stringify(figures)}`);
    expect(await cluster.stopAll()).toEqual(nodes.map(() => 0));
  }, 300_000);
});
